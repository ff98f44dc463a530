package ledger

import "testing"

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want OpClass
	}{
		{OpWrite, OpEvent}, {OpCreate, OpEvent}, {OpSymlink, OpEvent}, {OpHardlink, OpEvent}, {OpUploadComplete, OpEvent},
		{OpRename, OpStructural}, {OpDelete, OpStructural}, {OpMkdir, OpStructural}, {OpCopy, OpStructural},
		{OpChmod, OpSilent},
		{"Write", OpUnknown}, {"", OpUnknown}, {"batch", OpUnknown},
	} {
		if got := ClassOf(tc.op); got != tc.want {
			t.Errorf("ClassOf(%q) = %d, want %d", tc.op, got, tc.want)
		}
		if got := IsStructural(tc.op); got != (tc.want == OpStructural) {
			t.Errorf("IsStructural(%q) = %v", tc.op, got)
		}
	}
}
