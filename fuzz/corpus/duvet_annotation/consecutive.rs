//= https://example.com/spec.txt#section-1
//# first quote
//= https://example.com/spec.txt#section-2
//= type=test
//# second quote
//# continues

//# stray quote after a blank line
let x = 1;
//= https://example.com/spec.txt#
//= priority=high
//= level=SHOULD NOT
//= format=ietf
//= tracking-issue=42
//= feature=f
//= type=todo
