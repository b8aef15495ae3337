"""The sample campaign shipped with the tool: content/ and the sample saves."""
