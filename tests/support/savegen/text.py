"""Words the save generator puts in people's mouths, and what they know.

Dialogue banks for the simulated playthrough: what each NPC says about their
topics, what the player says back, the lines of a quarrel, the shared references
(jokes, nicknames, memories) a close NPC collects, and which facts each NPC can
tell and on which topic. The lines name
places and things the story cards key on (harbor, the ring, lighthouse, dock,
guild, salt) so a prompt preview built from a generated save pulls in lore.
"""

from __future__ import annotations

PLAYER_NAME = "Ilse Maren"
PLAYER_PRONOUNS = "she/her"
PLAYER_DESCRIPTION = (
    "A courier new to the Reach, carrying a sealed letter for a harbor master who "
    "drowned before she arrived. Curious, stubborn, and short on coin."
)

NPC_TOPICS: dict[str, tuple[str, ...]] = {
    "kael-davan": ("cargo", "smuggling", "the-ring", "debts"),
    "lera-sessik": ("family", "rumors", "weather", "old-songs"),
    "sera-venn": ("the-lighthouse", "weather", "shipwrecks", "smuggling"),
    "orrin-vask": ("harbor-dues", "guild-politics", "debts", "cargo"),
    "mira-holt": ("salt-trade", "rumors", "smuggling", "family"),
    "tobin-quill": ("rumors", "the-ring", "shipwrecks", "weather"),
}
"""Topics each NPC brings up, from ``global/enums/topics.yaml``."""

NPC_PLACES: dict[str, tuple[str, ...]] = {
    "kael-davan": ("dock-ward", "net-lofts", "tidewater-inn"),
    "lera-sessik": ("tidewater-inn",),
    "sera-venn": ("lighthouse", "breakwater"),
    "orrin-vask": ("harbor-office", "customs-house", "dock-ward"),
    "mira-holt": ("salt-market", "tidewater-inn"),
    "tobin-quill": ("dock-ward", "breakwater", "drowned-chapel", "salt-market"),
}
"""Location slugs where each NPC can be met, from ``global/locations.yaml``."""

GREETINGS: dict[str, tuple[str, ...]] = {
    "kael-davan": (
        "You again. Mind the rope, it bites.",
        "If you're here to lift crates, grab an end. If not, stand clear of the pier.",
        "Quiet night on the dock. I hate quiet nights.",
    ),
    "lera-sessik": (
        "Sit, sit — the fire's the only honest thing in the taproom tonight.",
        "Back at the Tidewater? Good. The usual, or something that helps you sleep?",
        "Wipe your boots, love. The harbor tracks in enough salt without you.",
    ),
    "sera-venn": (
        "Close the door behind you. The lamp doesn't like the draught.",
        "You climbed all the way up the lighthouse for conversation? Odd choice.",
        "Ships in: four. Ships out: three. Say what you came to say.",
    ),
    "orrin-vask": (
        "Ah. Name, berth and purpose, if you'd be so kind — the guild likes its ledger tidy.",
        "Good evening. If this is about dues, the window closes at the bell.",
        "Please, sit. Mind the ink; it stains the soul, or so the harbor master said.",
    ),
    "mira-holt": (
        "Salt for your stew, salt for your wounds, salt for your secrets — what'll it be?",
        "Look who's back at my stall! Come to lose another bargain?",
        "Don't touch the white salt unless you're buying it. Or asking about it. Especially not that.",
    ),
    "tobin-quill": (
        "Message? Oars? Gossip? Copper a trip, two if it's heavy.",
        "You want the news from the water? I've got three kinds of news today.",
        "Hey! You're the courier. Everyone on the harbor's talking about you. Mostly nice things.",
    ),
}

NPC_LINES: dict[str, dict[str, tuple[str, ...]]] = {
    "kael-davan": {
        "cargo": (
            "Manifest says dried cod. Cod doesn't clink when you drop the crate.",
            "Half the cargo on pier six never touches the customs house.",
            "We unload by lantern, we load by feel. Don't ask me what's in the crates.",
        ),
        "smuggling": (
            "Smuggling's a big word for a small skiff and a dark night.",
            "Every night boat on this harbor owes somebody. Most owe the same somebody.",
            "I don't smuggle. I carry. There's a difference, and it's about forty coppers.",
        ),
        "the-ring": (
            "Don't say 'the ring' that loud on the dock. Walls here are made of ears.",
            "The ring doesn't recruit. It lends you money, and then you're in.",
            "You want to know who runs the ring? So do I. I'd like to know who I'm paying.",
        ),
        "debts": (
            "I owe more than I earn in a season. The interest has its own interest.",
            "There's a man who counts my debts on his fingers. He never runs out of fingers.",
            "Pay it off? Sure. Right after the sea runs dry.",
        ),
    },
    "lera-sessik": {
        "family": (
            "Cass used to sit right where you're sitting. Always with his back to the door, the fool.",
            "My brother sailed on the Gull's Promise. Fair weather, calm sea, and she never came home.",
            "Family's the people who pay their tab late but always pay it.",
        ),
        "rumors": (
            "Word in the taproom is the guild's raising the dues again. Word in the taproom is usually right.",
            "Someone's been buying rounds with fresh guild coin. Fresh coin from a poor clerk — funny, that.",
            "Tobin swears the drowned chapel bell rang with no swell. Tobin swears a lot of things.",
        ),
        "weather": (
            "Gulls are sitting on the breakwater. That's a storm by morning, mark me.",
            "The harbor bell's been sullen all week. Weather's turning.",
            "Fog like this, even the lighthouse looks like a rumor.",
        ),
        "old-songs": (
            "My mother sang the one about the lamp-keeper's daughter. Every verse ends with somebody drowning.",
            "Sing it with me — no? Coward. The Tidewater has heard worse voices than yours.",
            "Old songs are just news that nobody bothered to forget.",
        ),
    },
    "sera-venn": {
        "the-lighthouse": (
            "Someone climbed my stairs while I slept and trimmed the wick to nothing.",
            "The lamp burns two pints of oil a night. Last week it burned four. Explain that.",
            "The lighthouse is the only thing in the Reach that tells the truth to every ship.",
        ),
        "weather": (
            "Wind's backing south. Storm in two days, three if the tide is kind.",
            "I read weather the way Orrin reads ledgers. Except the weather doesn't lie.",
            "Clear sky tonight. No moon. Bad combination for honest sailors.",
        ),
        "shipwrecks": (
            "The Teeth took the Gull's Promise in fair weather. Reefs don't do that on their own.",
            "Forty hulls on the reef in living memory. I logged eleven of them myself.",
            "A wreck is a story with the ending torn out.",
        ),
        "smuggling": (
            "Night boats pass under my lamp without lanterns. I count them anyway.",
            "When the lighthouse goes dark, somebody lands cargo. Every time.",
            "The ring needs my lamp dark. I need it lit. One of us will be disappointed.",
        ),
    },
    "orrin-vask": {
        "harbor-dues": (
            "The dues rose by a third, yes. The guild has expenses. The guild always has expenses.",
            "Every hull pays at the dock ward. Every hull. I'm sure yours will too.",
            "Late dues accrue a penalty. It's all in the ledger, in very small writing.",
        ),
        "guild-politics": (
            "The harbor master's chair has been empty since the drowning. Chairs don't stay empty.",
            "Three guild wardens, four opinions. Politics, you understand.",
            "I am a humble clerk. Humble clerks see every page of the ledger.",
        ),
        "debts": (
            "Debts are simply promises with arithmetic attached.",
            "Kael Davan? His account is… complicated. Most accounts on the dock are.",
            "A debt unpaid is a favor owed. The guild is very patient about favors.",
        ),
        "cargo": (
            "Declared cargo is taxed. Undeclared cargo is a rumor, and rumors pay nothing.",
            "The customs house seals every crate. Mostly every crate.",
            "You'd be amazed how much salt fits in a barrel marked 'nails'.",
        ),
    },
    "mira-holt": {
        "salt-trade": (
            "Grey salt from the pans, three coppers. White salt, five — and no questions.",
            "The salt market's been flooded with fine white. None of the licensed pans make it.",
            "Good brine tastes like the sea remembering something.",
        ),
        "rumors": (
            "My cousin on the Heron says the ring paid off a guild warden. My cousin says a lot of things.",
            "You didn't hear it from me, but Vask bought new boots. Good leather, too.",
            "Rumor's like salt — a pinch makes it better, a fistful ruins it.",
        ),
        "smuggling": (
            "Smuggled? This salt? It walked here on its own little legs, I'm sure.",
            "Night boats come in by the net lofts. Everyone knows. Nobody watches.",
            "I buy from whoever sells cheapest. That's trade, not smuggling.",
        ),
        "family": (
            "I've a cousin on every boat that matters and two on the ones that don't.",
            "My grandmother ran this stall before the salt market had a roof.",
            "Family's cheaper than guild insurance and twice as nosy.",
        ),
    },
    "tobin-quill": {
        "rumors": (
            "Heard the clerk fighting with a warden on the breakwater. Proper shouting.",
            "Somebody's paying ferry runners to not see things. I haven't been paid yet. Yet.",
            "They say the Tallyman never sets foot on the harbor. They say a lot.",
        ),
        "the-ring": (
            "The ring? Never heard of it. Also, don't go to the net lofts after midnight.",
            "My friend ran messages for the ring once. Now he doesn't run anywhere.",
            "Everyone on the water knows the ring. Nobody on the water says so.",
        ),
        "shipwrecks": (
            "I dove on the Gull's Promise once. Her hold was empty. Empty, in a wreck!",
            "The Teeth don't take ships in fair weather. Sera says so, and she knows.",
            "I found a brass lamp off the breakwater. Not a ship's lamp — a lighthouse lamp.",
        ),
        "weather": (
            "Storm's coming. My knees said so, and the gulls agreed.",
            "Flat water today. Good for ferrying, bad for secrets — sound carries.",
            "When the chapel bell rings on its own, you row home. Everybody knows that.",
        ),
    },
}

TENSE_LINES: dict[str, tuple[str, ...]] = {
    "kael-davan": (
        "You've been asking about me on the dock. Don't.",
        "Say that again and we'll see how well you swim.",
        "You think I chose this? You think anyone on this pier chose this?",
    ),
    "lera-sessik": (
        "Don't you dare bring Cass into this.",
        "I run an honest inn. Accuse me again and you'll drink at the chapel.",
    ),
    "sera-venn": (
        "You're calling me careless with the lamp? Get off my stairs.",
        "I've kept this light eleven years. You've been here eleven days.",
    ),
    "orrin-vask": (
        "That is a serious accusation, courier. The guild has a ledger for those too.",
        "I would choose your next words with great care.",
        "Bribes? I keep the dues. I do not keep anything else.",
    ),
    "mira-holt": (
        "Call my salt smuggled once more and see what it does to your price.",
        "You want to cost me my stall? Keep talking.",
    ),
    "tobin-quill": (
        "I didn't see anything! I never see anything! That's the job!",
        "Leave me out of it. I'm fifteen, not stupid.",
    ),
}

PLAYER_LINES: dict[str, tuple[str, ...]] = {
    "greeting": (
        "Evening. Have you got a moment?",
        "I was hoping I'd find you here.",
        "Mind if I sit? My feet have walked the whole harbor today.",
        "Hello again.",
    ),
    "cargo": (
        "What's actually in the crates on pier six?",
        "Who signs for the cargo that comes in after dark?",
    ),
    "smuggling": (
        "I saw a skiff with no lantern by the breakwater last night.",
        "How does anything get past the customs house in a town this small?",
    ),
    "the-ring": (
        "People keep not-mentioning the ring. Who are they?",
        "If someone owed the ring money, what would happen to them?",
    ),
    "harbor-dues": (
        "Why did the dues go up by a third?",
        "Who decides the dues now the harbor master is dead?",
    ),
    "family": (
        "Tell me about your family, if you like.",
        "Do you have people here, or just the harbor?",
    ),
    "weather": (
        "Is there a storm coming?",
        "The sky looks strange over the lighthouse tonight.",
    ),
    "guild-politics": (
        "Who's going to take the harbor master's chair?",
        "Does the guild agree with itself about anything?",
    ),
    "the-lighthouse": (
        "Has the lamp gone dark again?",
        "Who else has a key to the lighthouse?",
    ),
    "salt-trade": (
        "Where does the white salt come from?",
        "How much for a pound of the grey, and how much for the truth?",
    ),
    "debts": (
        "How deep is the hole you're in?",
        "Who holds the debts on the dock ward?",
    ),
    "shipwrecks": (
        "What really happened to the Gull's Promise?",
        "How does a ship hit the Teeth in fair weather?",
    ),
    "rumors": (
        "What are people saying in the taproom?",
        "Heard anything interesting on the water?",
    ),
    "old-songs": (
        "Sing me something old.",
        "What's the song about the lamp-keeper's daughter?",
    ),
    "confront": (
        "I know the lighthouse went dark the night the crates came in. You were there.",
        "Stop lying to me. Whose money is in your pocket?",
        "I've seen the ledger. The numbers don't add up, and you know it.",
    ),
    "closing": (
        "Thank you. I'll keep that to myself.",
        "I'll come by again tomorrow.",
        "That helps more than you know.",
    ),
}

SHARED_REFERENCES: dict[str, dict[str, tuple[str, ...]]] = {
    "lera-sessik": {
        "jokes": (
            "the stew that fought back", "Tobin's 'honest' ferry", "the ghost who pays in buttons",
            "the gull that stole the tab book", "salt in the ale, again", "Orrin's very small writing",
            "the night the fire refused to light", "the lamp-keeper's daughter, verse forty",
            "Kael's 'dried cod'", "the barrel marked nails", "the drunk who proposed to the harbor bell",
            "the chair that is always Cass's",
        ),
        "nicknames": (
            "Courier", "Salt-boots", "Little Storm", "Ink-finger", "the Letter Girl",
            "Ilse-of-the-Pier", "Night Owl", "Sparrow", "Trouble", "Second Tab", "Harbor Mouse",
        ),
        "memories": (
            "the night she first told you about Cass", "singing the old song together",
            "mending the taproom shutters before the storm", "the evening the harbor bell rang twice",
            "sharing the last of the good brandy", "watching the lighthouse from the inn roof",
            "the quiet after the guild wardens left", "the first time she poured without asking",
            "counting the tab book by candlelight", "the morning you found the Gull's Promise crest",
            "burying the drowned gull", "the dawn the fog lifted off the breakwater",
        ),
    },
    "sera-venn": {
        "jokes": (
            "the wick that trimmed itself", "Orrin's weather forecasts", "the gull committee",
            "four pints of honest oil", "the staircase tax", "the ship that saluted the wrong light",
            "the ghost keeper's tea", "the Teeth's dental plan", "the fog that owed rent",
            "the lamp's bad mood", "counting ships like sheep",
        ),
        "nicknames": (
            "Stair-climber", "Deckhand", "Courier", "Lamp-thief", "the Apprentice",
            "Salt-eyes", "Night Watch", "Gull", "Little Keeper", "Fog-walker", "Second Light",
        ),
        "memories": (
            "trimming the wick together", "the night you kept watch while she slept",
            "logging the wreck of the Heron", "the storm that broke the south window",
            "finding the blade marks on the lamp housing", "the first ship you counted in",
            "tea in the lantern room at dawn", "the day the light stayed lit",
            "carrying oil up two hundred steps", "the clear night with no moon",
            "the silence after the Teeth took the skiff",
        ),
    },
}
"""Shared references NPCs can collect once they are close to the player."""


FACTS = (
    ("contraband.ring_exists", ("Suspects", "KnowsOf", "KnowsDetails"),
     (("kael-davan", "the-ring"), ("tobin-quill", "the-ring"), ("mira-holt", "smuggling"))),
    ("contraband.ring_leader", ("Suspects", "KnowsOf"), (("tobin-quill", "rumors"),)),
    ("smuggling.night_boats", ("KnowsOf", "KnowsDetails"),
     (("sera-venn", "smuggling"), ("mira-holt", "smuggling"), ("kael-davan", "smuggling"))),
    ("harbor.dues_raised", ("KnowsOf", "KnowsDetails"),
     (("orrin-vask", "harbor-dues"), ("lera-sessik", "rumors"))),
    ("harbor.ledger_missing", ("Suspects", "KnowsOf"), (("orrin-vask", "guild-politics"),)),
    ("guild.vask_takes_bribes", ("Suspects", "KnowsOf"),
     (("mira-holt", "rumors"), ("lera-sessik", "rumors"), ("tobin-quill", "rumors"))),
    ("lighthouse.lamp_sabotaged", ("KnowsOf", "KnowsDetails"), (("sera-venn", "the-lighthouse"),)),
    ("weather.storm_coming", ("KnowsOf", "KnowsDetails"),
     (("sera-venn", "weather"), ("lera-sessik", "weather"), ("tobin-quill", "weather"))),
    ("family.cass_sessik_lost", ("KnowsOf", "KnowsDetails"), (("lera-sessik", "family"),)),
    ("person.kael_debts", ("Suspects", "KnowsOf", "KnowsDetails"),
     (("kael-davan", "debts"), ("orrin-vask", "debts"))),
    ("salt-market.white_salt_origin", ("Suspects", "KnowsOf"), (("mira-holt", "salt-trade"),)),
    ("shipwreck.gulls_promise_hold", ("KnowsOf", "KnowsDetails"),
     (("tobin-quill", "shipwrecks"), ("sera-venn", "shipwrecks"))),
    ("rumor.chapel_bell", ("Suspects",), (("tobin-quill", "weather"),)),
)
"""Facts NPCs can tell: id, the confidence ladder telling climbs, (teller, topic)."""

OBSERVATIONS = (
    ("smuggling.night_boats", "Direct", "DirectObservation"),
    ("lighthouse.lamp_sabotaged", "Direct", "DirectObservation"),
    ("guild.vask_takes_bribes", "Suspects", "Inferred"),
    ("rumor.chapel_bell", "Suspects", "Heard"),
    ("weather.storm_coming", "KnowsOf", "Background"),
)
"""Facts the player can pick up alone: id, confidence, source."""

LAPSES = {"weather.storm_coming": "Stale", "rumor.chapel_bell": "Contradicted",
          "guild.vask_takes_bribes": "Contradicted", "contraband.ring_leader": "Contradicted"}
"""Facts that can stop holding (the storm passes, a rumor is disproved)."""

DISPOSITION = {"lera-sessik": 0.55, "sera-venn": 0.35, "mira-holt": 0.3, "tobin-quill": 0.4,
               "kael-davan": 0.1, "orrin-vask": 0.0}


def shared_references_for(slug: str) -> dict[str, tuple[str, ...]]:
    """The shared-reference bank of one NPC, a generic one when it has none.

    Args:
        slug: the NPC's content slug.

    Returns:
        Lists of candidate references keyed by kind (jokes, nicknames, memories).
    """
    if slug in SHARED_REFERENCES:
        return SHARED_REFERENCES[slug]
    return {
        "jokes": ("the crate that clinked", "the harbor tax on breathing", "the gull with a grudge",
                  "the longest ferry ride", "the ledger with small writing", "the honest skiff"),
        "nicknames": ("Courier", "Salt-boots", "Trouble", "Letter-bearer"),
        "memories": ("the first evening on the dock", "waiting out the rain under the salt market roof",
                     "the walk along the breakwater", "the night the chapel bell rang"),
    }


PLOT_ESSENTIALS = (
    "Ilse Maren carries a sealed letter addressed to the harbor master of Settled Reach, "
    "who drowned a week before she arrived. The ring wants the letter; the harbor guild "
    "says it does not exist. The lighthouse has gone dark twice on moonless nights."
)
AUTHORS_NOTE = (
    "Keep the tone wet, cold and wary. Humor is allowed; warmth has to be earned. "
    "Nobody volunteers the ring's business to a stranger."
)
STORY: dict[str, str] = {
    "evening": (
        "Ilse has settled into the rhythm of the harbor: evenings at the Tidewater with "
        "Lera, climbs up to Sera's lighthouse, bargaining at the salt market and careful "
        "questions on the dock about crates that clink."
    ),
    "large": (
        "Months in the Reach. Ilse knows every pier and every tab at the Tidewater, and "
        "the harbor has started to treat her as one of its own, mostly."
    ),
    "many-conversations": (
        "A year in the Reach, in short talks: a word with Lera over the bar, a question "
        "for Sera at the lamp, a nod to Kael on the dock, day after day."
    ),
    "walkaway-spiral": (
        "Kael Davan keeps trying to tell Ilse something about the ring, and Ilse keeps "
        "leaving before he finishes. The dock has noticed, and so has Kael."
    ),
    "abandoned-confrontation": (
        "Ilse accused Kael of working for the ring in front of half the dock ward, then "
        "walked off before he could answer. Later she took the ledger to Orrin Vask."
    ),
}
"""``story.story_summary`` per scenario."""
