#= spec/foo.md#bar
#= type=test
## The thing MUST work.
def test(): pass
//= https://example.com/x?a=b#s-1
//= reason=because
//= reason=more
//=======
//# quoted
