fn a() {}
//= https://example.com/spec.txt
fn b() {}
//# orphan
//#
//= source=spec/foo.md#bar
//= type=exception
//= reason=not applicable
//# q
