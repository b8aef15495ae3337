"""The rule registry: one entry per finding code (shared/docs/checks.md), declared once.

Each ``Rule`` says what the code means (severity, title, what it checks, the seed §
it comes from, an example), where a double-click on such a finding lands in the app,
and which functions emit it (``implementations``, ``"module:qualname"`` under
``narrative_debugger``), so the entry leads to the code in one step. Everything that
lists rules reads ``RULES``: ``finding()`` takes severities from it, the ``rules``
command prints it, SARIF and JUnit outputs take their rule lists from it.
``tests/test_rules_registry.py`` proves that every code emitted anywhere is
registered, that every registered code is emitted, and that every implementation
named here exists and emits its code.

To add a finding code: add its ``Rule`` here (a new code, never a reused one), emit it
with ``sink.add("CODE", message, location, tick, target=...)`` in the function you
name in ``implementations``.
"""

from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass

import msgspec


class Severity(enum.Enum):
    """``error`` makes ``check`` exit 1; ``warning`` does not."""

    ERROR = "error"
    WARNING = "warning"


E, W = Severity.ERROR, Severity.WARNING
_PKG = "narrative_debugger."

#: Where the code families land (the README's table and ``Rule.lands`` read these).
LAND_JOURNAL = "Journal dock: the entry is selected (tick, NPC and the family's view follow)"
LAND_SNAPSHOT = "Snapshot dock: the saved value beside the replayed one, its row selected (at saved_at_tick)"
LAND_CONTENT = "Content dock: the file, the line selected"
LAND_LINE = "Monologues dock: the line selected"
LAND_FILE = "Findings dock only: the file cannot be opened (check names the line:col or JSON path)"
LAND_FILE_CONTENT = "Findings dock only: the entry is not read, so there is no line to show (the location names it)"


@dataclass(frozen=True)
class Rule:
    """One finding code of the catalogue.

    Attributes:
        code: the stable code (``K003``); a contract with QA automation.
        severity: ``error`` (check exits 1) or ``warning``.
        title: one line.
        checks: what the rule finds, as checks.md says it.
        seed: the seed § (or save-format §) the rule implements.
        example: a finding as a tester sees it.
        lands: where a double-click on the finding lands in the app (view or dock,
            and what is selected).
        implementations: the functions that emit it, ``"module:qualname"`` relative to
            the ``narrative_debugger`` package.
    """

    code: str
    severity: Severity
    title: str
    checks: str
    seed: str
    example: str
    lands: str
    implementations: tuple[str, ...]

    @property
    def family(self) -> str:
        """The code's letter (F, K, I, R, T, J, C, M)."""
        return self.code[:1]

    def implementation(self, k: int = 0):
        """The ``k``-th implementing function (imports its module).

        Raises:
            ImportError, AttributeError: when the registry names code that does not exist (a bug).
        """
        module, _, qualname = self.implementations[k].partition(":")
        obj = importlib.import_module(_PKG + module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj

    def to_json(self) -> dict:
        """``{"code", "severity", "title", "checks", "seed", "example", "lands", "implementations"}``:
        every field in order, the severity by its value, implementations a tuple of strings."""
        return msgspec.to_builtins(self)


_SNAP = "models.rules.checks:check_snapshot"
_INTER = "models.rules.checks:_check_interaction"
_NPC = "models.rules.checks:_check_npc"
_REPLAY = "models.timeline.replay:_Replayer."
_MONO = "models.content.monologue:"
_LOAD = "models.content.loader:"
_FILES = "models.content.files:"

_RULES = (
    Rule("F001", E, "not JSON, not gzip or not UTF-8",
         "The file is not JSON (or not gzip for .json.gz), or not UTF-8. Location line:col.",
         "save-format §1 Encoding",
         "F001 3:17  evening.json: not valid JSON: Expecting ',' delimiter",
         LAND_FILE,
         ("models.save.jsonio:decode_plain", "models.save.jsonio:parse_document", "models.save.jsonio:refused_document",
          "models.save.jsonio:report_duplicate_keys", "models.save.jsonio:report_lone_surrogates")),
    Rule("F002", E, "shape: missing field, wrong type or unknown variant",
         "A missing field, a wrong type (also a number outside its save-format type: a u8 of 300, an i16 of 60 000, "
         "an f32 past 3.4e38 or one that overflows to infinity, a StableId key that is not an ASCII decimal u64) "
         "or an unknown enum variant; located by JSON path.",
         "save-format §2-§5",
         "F002 npcs.17.tolerance.threshold  evening.json: npcs.17.tolerance.threshold: expected an i16, found a string",
         "Journal dock for a journal entry; in a save that opens despite it, the Snapshot dock: its JSON path's row "
         "selected (at saved_at_tick; the saved column says what is wrong); else " + LAND_FILE,
         ("models.save.saveshape:Shape.bad", _REPLAY + "on_SharedReferenceAdded")),
    Rule("F003", E, "not a save, or a newer format version",
         "`format` is not \"settled-reach.save\", or `format_version` is newer than supported.",
         "save-format §2 Top level",
         "F003 format  notes.json has 'format' 'x', not 'settled-reach.save': this is not a Settled Reach save",
         LAND_FILE,
         ("models.save.savefile:parse_save",)),
    Rule("K001", E, "FactId is not category.topic",
         "A FactId that is not `category.topic` (lowercase, one dot), in the snapshot or in a journal event.",
         "save-format §3; schema §3.1",
         "K001 player.knowledge.facts.Smuggling-night_boats  FactId 'Smuggling-night_boats' is not category.topic",
         "Snapshot dock (a saved fact) or Journal dock (an event naming it); the fact is selected in the Knowledge graph",
         (_SNAP, _REPLAY + "on_FactLearned", _REPLAY + "on_FactUpdated")),
    Rule("K002", E, "interaction metadata on the wrong fact, or missing",
         "Interaction metadata on a fact outside the `interaction` category, or an `interaction` fact without it.",
         "save-format §3; schema §3.3 InteractionMetadata",
         "K002 player.knowledge.facts.rumor.ferry.metadata  rumor.ferry carries Interaction metadata but is not in the interaction category",
         LAND_SNAPSHOT + "; Journal dock for a FactLearned event",
         (_SNAP, _REPLAY + "on_FactLearned")),
    Rule("K003", E, "interaction FactId is not interaction.{slug}_{NNN}",
         "An interaction FactId that is not `interaction.{slug}_{NNN}` (kebab-case slug, zero-padded sequence).",
         "schema §3.1 Interaction FactId format",
         "K003 player.knowledge.facts.interaction.mira-holt_18  'interaction.mira-holt_18' is not interaction.{slug}_{NNN}",
         LAND_SNAPSHOT + " (the malformed fact as saved; the replay has no such entry)",
         (_SNAP,)),
    Rule("K004", W, "a tick after saved_at_tick",
         "`acquired_tick`, `started_tick`, `ended_tick` or `last_seen_tick` after `saved_at_tick`.",
         "save-format §2 saved_at_tick; §3",
         "K004 player.knowledge.facts.contraband.ring_leader.acquired_tick  acquired_tick 234194 is after saved_at_tick 233944",
         LAND_SNAPSHOT + " (the future tick as saved, beside the replayed tick)",
         (_SNAP, _INTER)),
    Rule("K005", W, "map keys not in BTreeMap order",
         "Map keys not in BTreeMap order: facts by bytes, StableId keys numerically.",
         "save-format §1 (Rust BTreeMap)",
         "K005 npcs.130  npcs: key '130' comes after '1000003'; a BTreeMap writes keys sorted numerically",
         LAND_SNAPSHOT + " (the key out of order)",
         ("models.rules.checks:_check_key_order",)),
    Rule("K006", E, "NPC slug is not kebab-case ASCII",
         "An NPC's `slug` that is not a kebab-case ASCII ContentSlug (a-z, 0-9, single hyphens): no interaction FactId can name it, and a look-alike (a Cyrillic letter, a zero-width space) would print like another NPC's slug. The message spells the slug in ASCII escapes.",
         "schema §3.1 ContentSlug; save-format §4 slug",
         "K006 npcs.17.slug  npcs.17: slug 'k\\u0430el-davan' is not a kebab-case ASCII slug (a-z, 0-9 and single hyphens, like kael-davan)",
         LAND_SNAPSHOT + " (the NPC selected)",
         (_NPC,)),
    Rule("I001", E, "illegal interaction transition",
         "An illegal transition of an interaction in progress (e.g. Active → ConflictAbandoned, Confrontation → WalkedAway).",
         "schema §3.2 InteractionState",
         "I001 journal[1982].event.InteractionConflictAbandoned  tobin-quill: interaction.tobin-quill_018 moves Active → ConflictAbandoned",
         LAND_JOURNAL + "; the Interactions view draws the move in red",
         (_REPLAY + "move",)),
    Rule("I002", E, "ended_tick missing on an ended interaction, or set on one in progress",
         "`ended_tick` null on an ended interaction, or set on one in progress.",
         "schema §3.3 InteractionMetadata",
         "I002 player.knowledge.facts.interaction.lera-sessik_004.metadata.Interaction.ended_tick  interaction.lera-sessik_004 is Completed but ended_tick is null",
         LAND_SNAPSHOT,
         (_INTER,)),
    Rule("I003", E, "ended_tick before started_tick",
         "`ended_tick` before `started_tick`.",
         "schema §3.3 InteractionMetadata",
         "I003 ....metadata.Interaction.ended_tick  interaction.kael-davan_002: ended_tick 90 is before started_tick 120",
         LAND_SNAPSHOT.replace("at saved_at_tick", "at the interaction's started_tick, where it exists"),
         (_INTER,)),
    Rule("I004", E, "confrontation flag disagrees with state or journal",
         "The `confrontation` flag disagrees with the interaction state, or with the journal's InteractionConfrontation events.",
         "schema §3.2-§3.3; save-format §5 InteractionConfrontation",
         "I004 ....metadata.Interaction.confrontation  interaction.sera-venn_003 is ConflictAbandoned but its confrontation flag is false",
         LAND_SNAPSHOT,
         (_INTER, "models.rules.checks:check_against_replay")),
    Rule("I005", E, "two interactions in progress at once",
         "Two interactions in progress (Active or Confrontation) at once, in the snapshot or while replaying.",
         "schema §7.2 Event flow; save-format §5 game rules",
         "I005 journal[40].event.InteractionStarted  kael-davan: interaction.kael-davan_003 starts while interaction.lera-sessik_002 is still in progress",
         LAND_JOURNAL + "; " + LAND_SNAPSHOT + " for the snapshot; either way the conversation that started while "
         "another was in progress is selected",
         (_SNAP, _REPLAY + "on_InteractionStarted")),
    Rule("I006", E, "interaction sequence numbers not 001, 002, ...",
         "An NPC's interaction sequence numbers are not 001, 002, ... without gap or repeat.",
         "schema §7.3 Sequence number allocation",
         "I006 player.knowledge.facts.interaction.orrin-vask_004  interactions with orrin-vask are not numbered 001, 002, ...: missing 003",
         LAND_SNAPSHOT,
         (_SNAP,)),
    Rule("I007", E, "FactId slug is not the slug of target_entity",
         "The FactId's slug is not the slug of `target_entity`.",
         "schema §3.1; §3.3 target_entity",
         "I007 ....metadata.Interaction.target_entity  interaction.mira-holt_002: the FactId names 'mira-holt' but target_entity 17 is 'kael-davan'",
         LAND_SNAPSHOT,
         (_INTER,)),
    Rule("I008", E, "confidence disagrees with interaction state",
         "Confidence disagrees with state: in progress must be Direct; ended must be KnowsDetails (never below the decay floor, never Suspects).",
         "schema §4 Confidence Mapping (decay floor)",
         "I008 player.knowledge.facts.interaction.lera-sessik_001.confidence  interaction.lera-sessik_001 is Completed with confidence KnowsOf",
         LAND_SNAPSHOT + " (the saved confidence beside the replayed one); Journal dock for a FactUpdated event",
         (_INTER, _REPLAY + "on_FactUpdated")),
    Rule("I009", W, "unknown topic",
         "A topic that is not in `global/enums/topics.yaml`.",
         "schema §3.3 topics; save-format §7",
         "I009 journal[1577].event.InteractionCompleted.topics[2]  topic 'sea-serpents' is not in global/enums/topics.yaml",
         "Journal dock (the entry, its topic named in the detail) or " + LAND_SNAPSHOT + " (the topic's row)",
         (_INTER, _REPLAY + "on_InteractionCompleted")),
    Rule("I010", E, "target is not an NPC of the save",
         "`target_entity` (or an event's `target`) is not an NPC of the save. The events that name one unknown target give one I010, on the first, with how many there are.",
         "schema §3.3 target_entity; save-format §4",
         "I010 journal[12].event.StressChanged.target  the event names target 77, which is not an NPC of the save",
         LAND_JOURNAL + "; " + LAND_SNAPSHOT + " for the snapshot",
         (_INTER, _REPLAY + "target_npc", _REPLAY + "_report_unknown_names")),
    Rule("I011", E, "interaction event with nothing in progress",
         "An interaction event for a target with nothing in progress, also when that NPC's earlier interactions have all ended (a terminal state is never left).",
         "schema §3.2 (terminal states); §7.2 Event flow",
         "I011 journal[88].event.InteractionCompleted  mira-holt: Completed event but no conversation with them is in progress",
         LAND_JOURNAL,
         (_REPLAY + "_current",)),
    Rule("I012", E, "two NPCs with one slug, or the player with an NPC's StableId",
         "Two NPCs of the save share a slug (their interaction FactIds `interaction.{slug}_NNN`, and every lookup by slug, collide), or the player's `stable_id` is also an NPC's (that NPC's lines read as the player's). Found on the later NPC, naming the first.",
         "schema §3.1 (interaction FactIds); save-format §2, §4",
         "I012 npcs.99.slug  NPCs 17 and 99 both have the slug 'kael-davan': their interactions and every lookup by slug cannot tell them apart",
         LAND_SNAPSHOT,
         ("models.rules.checks:check_identities",)),
    Rule("R001", E, "relationship score outside 0..100 or not finite",
         "A relationship score outside 0..100 or not finite, saved or recorded in the journal.",
         "relationship seed: Relationship Levels; Score Calculation (clamp)",
         "R001 npcs.17.relationship.score  kael-davan: relationship score 104.5 is outside 0..100",
         LAND_SNAPSHOT + "; Journal dock for a recorded score_after",
         (_NPC, _REPLAY + "_check_score")),
    Rule("R002", E, "recorded delta is not the relationship formula",
         "A recorded delta that is not the relationship formula of its inputs (tolerance 1e-4).",
         "relationship seed: Delta Formula",
         "R002 journal[2983].event.RelationshipInteraction.delta  sera-venn: delta 0.375 is not the formula's 0.1750",
         LAND_JOURNAL + "; the detail shows the recorded delta beside the formula's",
         (_REPLAY + "on_RelationshipInteraction",)),
    Rule("R003", E, "score_after is not previous score plus delta (or minus penalty)",
         "`score_after` that is not the clamped previous score plus the delta (or minus the penalty).",
         "relationship seed: Score Calculation; schema §8.1 (penalty)",
         "R003 journal[40].event.RelationshipInteraction.score_after  lera-sessik: score_after 31 should be 30.5000",
         LAND_JOURNAL + "; the detail shows the recorded score beside the computed one",
         (_REPLAY + "_check_score",)),
    Rule("R004", E, "more than 10 shared references of a kind, or a duplicate",
         "More than 10 shared references of a kind, or a duplicate.",
         "relationship seed: Shared References (Adding References)",
         "R004 npcs.9.relationship.shared_references.jokes  lera-sessik: shared jokes repeat \"Kael's 'dried cod'\"",
         LAND_SNAPSHOT + " (the saved references beside the replayed ones)",
         (_NPC,)),
    Rule("R005", E, "impossible relationship counters",
         "Counters that cannot be: positive + negative > total, averages negative.",
         "relationship seed: Interaction Tracking; Running Average Formula",
         "R005 npcs.42.relationship.total_interactions  mira-holt: 5 positive + 4 negative interactions exceed the total of 8",
         LAND_SNAPSHOT,
         (_NPC,)),
    Rule("R006", W, "sentiment outside -1..1",
         "A RelationshipInteraction whose `sentiment` is outside -1..1: the entry is applied as recorded.",
         "save-format §5 RelationshipInteraction (sentiment -1..1); relationship seed: Delta Formula (base -0.5..+0.5)",
         "R006 journal[62].event.RelationshipInteraction.sentiment  kael-davan: sentiment 1.5 is outside -1..1",
         LAND_JOURNAL,
         (_REPLAY + "on_RelationshipInteraction",)),
    Rule("T001", E, "stress out of i16 range or not previous + delta",
         "Stress outside the i16 range, or `StressChanged.current_stress` ≠ previous + delta.",
         "schema §8.1 (ToleranceThreshold.current_stress, i16)",
         "T001 journal[300].event.StressChanged.current_stress  kael-davan: stress 4 + delta 2 is 6, but the entry says 9",
         LAND_JOURNAL + "; " + LAND_SNAPSHOT + " for the saved stress",
         (_NPC, _REPLAY + "on_StressChanged")),
    Rule("T002", W, "interaction tolerance outside its documented range",
         "Interaction tolerance outside its documented range (walk_away_threshold 1..5, walk_away_penalty 0.1..0.5, walk_away_stress_delta i16).",
         "save-format §4 interaction_tolerance; schema §8",
         "T002 npcs.17.interaction_tolerance.walk_away_threshold  kael-davan: walk_away_threshold 9 is outside 1..5",
         LAND_SNAPSHOT,
         (_NPC,)),
    Rule("T003", E, "walk-away without its walk_away stress change",
         "A walk-away without its `walk_away` stress change of `walk_away_stress_delta` at the same tick.",
         "schema §8.1 step 3; save-format §5 game rules",
         "T003 journal[161]  lera-sessik: walk-away #1 at tick 11054 has no StressChanged (cause walk_away, delta 2) at the same tick",
         LAND_JOURNAL + " (the walk-away)",
         (_REPLAY + "settle", _REPLAY + "_stress_walk_away")),
    Rule("T004", E, "walk-away penalty missing, unexpected or of the wrong size",
         "A walk-away penalty missing beyond the threshold, present within it, or of the wrong size.",
         "schema §8.1 steps 1-2; save-format §5 game rules",
         "T004 journal[883].event.WalkAwayPenalty  sera-venn: walk-away #1 is within the threshold of 1, yet it is penalised",
         LAND_JOURNAL,
         (_REPLAY + "settle", _REPLAY + "on_WalkAwayPenalty", _REPLAY + "_pay_early")),
    Rule("J001", E, "journal ticks decrease",
         "Journal ticks that decrease. The entries behind one earlier, higher tick give one J001, on the first, with how many there are.",
         "save-format §5 Journal (ticks never decrease)",
         "J001 journal[1206].tick  journal tick 93913 comes after tick 93914: ticks never decrease",
         LAND_JOURNAL + " (both entries: the earlier, later tick and the one that goes back)",
         (_REPLAY + "_report_behind",)),
    Rule("J002", E, "journal event after saved_at_tick",
         "A journal event after `saved_at_tick`.",
         "save-format §2 saved_at_tick; §5",
         "J002 journal[3801].tick  journal entry at tick 302000 is after saved_at_tick 301812",
         LAND_JOURNAL,
         (_REPLAY + "run",)),
    Rule("J003", E, "replaying the journal does not give the snapshot",
         "Replaying the journal does not give the snapshot; names the first differing path of each map (facts, entities, each NPC) and both values. The Snapshot dock lists every difference.",
         "save-format §5 (replay must give exactly the snapshot)",
         "J003 player.knowledge.facts.contraband.ring_leader.acquired_tick  replay differs from the snapshot at acquired_tick: snapshot 234194, replay 4668",
         LAND_SNAPSHOT + " (every difference listed; the named one selected)",
         ("models.rules.checks:check_against_replay",)),
    Rule("J004", E, "event names an unknown fact, entity or speaker",
         "An event that names an unknown fact, entity or speaker. An unknown speaker is reported once, on its first DialogueLine, with how many lines it spoke (a save whose player could not be read made every player line a J004).",
         "save-format §5 (FactUpdated, DialogueLine)",
         "J004 journal[77].event.FactUpdated.fact_id  FactUpdated names 'rumor.ghost', which the player does not know at this point",
         LAND_JOURNAL,
         (_REPLAY + "on_FactUpdated", _REPLAY + "_report_unknown_names")),
    Rule("C001", E, "content YAML does not parse",
         "A content YAML file that does not parse, or whose top level or values have the wrong kind; file:line:col. A name (an NPC profile's, a story card's) or a story card's key that holds a line break, another control character (Unicode Cc, U+2028, U+2029) or a direction control (U+202A-U+202E, U+2066-U+2069) is a C001 at its key; it is used as written. A story card whose keys hold no key (keys missing, without a value, only commas and spaces) can never enter a prompt: a C001 at its keys; keys written empty (keys: "" or []) keep a card for reference only, without a finding. Keys written as a YAML list are read as the list of keys, an item a key: an item that is a list or a mapping is a C001 at its place and left out, and one holding a comma a C001 (read as the keys on either side of it). Content numbers (context_token_budget, max_output_tokens, an NPC's tolerance.threshold) are whole numbers in decimal ASCII digits, like a save's: 0x2000, 0o17, 8_192, full-width or Arabic-Indic digits, 1e3, .nan and quoted \"8192\" are each a C001 at the key, and the value is not used.",
         "save-format §7 Content directory",
         "C001 monologues/harbor.yaml:12:3  monologues/harbor.yaml: does not parse: mapping values are not allowed here",
         LAND_CONTENT,
         ("models.content.yaml_io:load_yaml", "models.content.yaml_io:_load_careful", "models.content.yaml_io:each_mapping", _LOAD + "load_content", _LOAD + "_load_prompt", _LOAD + "_load_list", "models.content.lore:load_cards", _LOAD + "_canon", "models.content.text_values:scalar_text", _MONO + "load_pool", _LOAD + "_threshold", "models.content.text_values:check_one_line", "models.content.lore:_card_keys")),
    Rule("C002", E, "NPC profile without a name, or a file name that is not a slug",
         "An NPC profile without a name, or a file name that is not a kebab-case slug.",
         "save-format §7 (npcs/<slug>.yaml); §4 slug",
         "C002 npcs/Kael.yaml:1:1  npcs/Kael.yaml: the file name 'Kael' is not a kebab-case slug",
         LAND_CONTENT,
         (_LOAD + "_load_npc",)),
    Rule("C003", E, "monologue prerequisite breaks the schema",
         "A monologue prerequisite that breaks the schema (unknown state, min_count < 1, unknown key, a list where one object is allowed).",
         "schema §6 Monologue Prerequisite Extension; save-format §7",
         "C003 monologues/harbor.yaml:20:7  the-last-shift_m_s_050: min_count must be a whole number of at least 1, found 0",
         LAND_CONTENT,
         (_MONO + "_parse_prerequisites", _MONO + "_parse_fact_prerequisite", _MONO + "_parse_interaction_prerequisite")),
    Rule("C004", W, "prerequisite names an undefined NPC or fact category",
         "A prerequisite naming an NPC or fact category that no content or save defines.",
         "schema §6; save-format §7 (global/enums)",
         "C004 monologues/harbor.yaml:8:3  harbor-nights_m_s_003: interaction target npc:kael-dava is not an NPC of the content or the save",
         LAND_LINE + " (and the Content dock at its file:line)",
         ("models.rules.checks:check_content",)),
    Rule("C005", E, "two monologue lines with one id",
         "Two monologue lines with one id.",
         "schema §6; save-format §7 (monologue ids)",
         "C005 monologues/night.yaml:4:3  monologue line id 'harbor-nights_m_s_001' is defined twice (first at monologues/harbor.yaml:3:3)",
         LAND_CONTENT + " (the second definition)",
         (_LOAD + "load_content",)),
    Rule("C006", E, "content folder cannot be listed",
         "A folder the content needs (npcs/, lore/, monologues/, global/, global/enums/, or the content folder itself) exists but cannot be listed, or is not a folder: none of its files were read.",
         "save-format §7 Content directory; issue 35 (no silent fallbacks)",
         "C006 npcs:1:1  npcs/ cannot be listed (Permission denied): none of its files were read",
         LAND_FILE_CONTENT,
         (_FILES + "_entries",)),
    Rule("C007", E, "two profiles for one slug",
         "Two NPC profiles for one slug (`npcs/<slug>.yaml` and `npcs/<slug>.yml`): the `.yaml` one is read, the other is not.",
         "save-format §7 (npcs/<slug>.yaml: one profile per slug)",
         "C007 npcs/kael-davan.yml:1:1  npcs/kael-davan.yml: a second profile for 'kael-davan', not read; npcs/kael-davan.yaml is the one used",
         LAND_CONTENT + " (the profile that is not read)",
         (_LOAD + "load_content",)),
    Rule("C008", E, "two story cards with one id",
         "Two story cards with one id, in one lore file or in two: the first (by file name, then order in the file) is kept, the other is left out of the prompt.",
         "save-format §7 (lore/*.yaml story cards)",
         "C008 lore/town.yaml:5:3  story card id 'dock-ward' is defined twice (first at lore/harbor.yaml:5:3); this one is left out of the prompt",
         LAND_CONTENT + " (the card left out)",
         (_LOAD + "load_content",)),
    Rule("C009", E, "content file links outside the content folder",
         "A content file that is a symbolic link whose target lies outside the content folder. It is not followed and not read: the evidence would come from a file that is not part of the content.",
         "save-format §7 Content directory; issue 35 (no silent fallbacks)",
         "C009 lore/outside.yaml:1:1  lore/outside.yaml is a symbolic link that leads outside the content folder: not followed, not read",
         LAND_FILE_CONTENT,
         (_FILES + "_outside",)),
    Rule("C010", W, "the bundled sample content stands in for the save's own",
         "A save opened without --content and with no content/ folder beside it is read against the bundled sample content: its C, I009 and M findings, names and prompts are the sample campaign's, not the game's. The app says so in the status bar too.",
         "save-format §7 Content directory; README (Content folder)",
         "C010 content/  no content/ folder beside the save; it is read against the bundled sample content (.../sample_saves/content), so its content findings, names and prompts are the sample campaign's (choose the game's with --content DIR)",
         LAND_FILE_CONTENT,
         ("models.playthrough:Playthrough.open",)),
    Rule("C011", W, "content entry not read",
         "An entry of npcs/, lore/ or monologues/ that is not a .yaml or .yml file (a sub-folder, notes.txt, Kael.YAML), or a YAML file in the content folder, global/ or global/enums/ whose name the tool does not read (prompts.yaml). Hidden entries that are not YAML (.gitkeep) are left out without a finding.",
         "save-format §7 Content directory; issue 35 (no silent fallbacks)",
         "C011 npcs/notes.txt:1:1  npcs/notes.txt is not read: only .yaml and .yml files of npcs/ are read",
         LAND_FILE_CONTENT,
         (_FILES + "_skipped",)),
    Rule("C012", W, "prompt.yaml, npcs/ or an enum file missing or empty",
         "A content folder without prompt.yaml, with an empty one (nothing but comments), or without NPC profiles (no npcs/ folder, or one with no .yaml/.yml file): the prompt goes without the narrator prompt, AI instructions and campaign canon and uses the default budget (8192 tokens), or has no NPC descriptions and makes names from slugs. Also a content folder without global/enums/topics.yaml or global/enums/fact_categories.yaml, or with one that lists no id: interaction topics are not checked (I009 is skipped), or C004 checks prerequisites' fact categories only against those the saves use. Not reported when the content folder (or global/enums/) cannot be listed (C006 says so).",
         "save-format §7 Content directory; prompt-preview.md; issue 35 (no silent fallbacks)",
         "C012 prompt.yaml:1:1  prompt.yaml is missing: the prompt has no narrator prompt, AI instructions or campaign canon, and uses the default budget of 8192 tokens (and 300 for the reply)",
         LAND_FILE_CONTENT,
         (_LOAD + "_report_missing", _LOAD + "_load_prompt", _LOAD + "_load_enum")),
    Rule("C013", W, "NPC without a profile",
         "An NPC of the save whose slug has no profile in the content's npcs/ (npcs/<slug>.yaml): the tool names it from its slug (kael-davan → Kael Davan) and its prompt goes without the NPC description. Not reported when the content has no profiles at all (C012 says so once).",
         "save-format §7 Content directory; prompt-preview.md; issue 35 (no silent fallbacks)",
         "C013 npcs.31.slug  wren-hale: NPC 31 of the save has no profile in npcs/ (wren-hale.yaml): it is named 'Wren Hale' from its slug, and the prompt has no description of it",
         LAND_SNAPSHOT + " (the NPC's slug as saved)",
         ("models.rules.checks:check_content",)),
    Rule("M001", E, "monologue fired while its prerequisites did not hold",
         "`MonologueFired` for a line whose prerequisites did not hold at that tick.",
         "schema §5.4 Monologue system queries; §6",
         "M001 journal[0].event.MonologueFired.line_id  monologue 'the-last-shift_m_s_050' fired at tick 309 but its prerequisites did not hold",
         LAND_LINE + " with its failing prerequisites (at the tick it fired); the entry in the Journal dock",
         (_REPLAY + "settle",)),
    Rule("M002", E, "monologue fired for an unknown line id",
         "`MonologueFired` for a line id no pool defines.",
         "schema §6; save-format §5 MonologueFired",
         "M002 journal[2252].event.MonologueFired.line_id  monologue line 'harbor-nights_m_s_999' is not defined by any pool in monologues/",
         LAND_LINE + " (a row for the fired id, marked 'no pool defines it'); the entry in the Journal dock",
         (_REPLAY + "on_MonologueFired",)),
)

#: code -> Rule, in catalogue order.
RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}


def rule(code: str) -> Rule:
    """The rule of ``code``.

    Raises:
        KeyError: for a code that is not in the catalogue (a bug, not bad input).
    """
    return RULES[code]
