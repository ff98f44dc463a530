package ledger

// The ops a mut, ev, reset or persisted record names in its op field: the filesystem mutations of
// the service under test. The spec sorts them in three classes by what a stream sends for one.
const (
	// Event-producing ops: each commit reaches a subscriber as a file_changed.
	OpWrite          = "write"
	OpCreate         = "create"
	OpSymlink        = "symlink"
	OpHardlink       = "hardlink"
	OpUploadComplete = "upload_complete"
	// Structural ops: a stream sends reset(structural_change) for them (or, in the dual and
	// file_changed modes, a file_changed with a payload).
	OpRename = "rename"
	OpDelete = "delete"
	OpMkdir  = "mkdir"
	OpCopy   = "copy"
	// Silent op: no frame at all.
	OpChmod = "chmod"
)

// OpClass is what a stream sends for an op.
type OpClass int

// The classes of ops; OpUnknown is an op the spec does not name.
const (
	OpUnknown    OpClass = iota
	OpEvent              // file_changed
	OpStructural         // reset(structural_change)
	OpSilent             // nothing
)

// ClassOf sorts op as the spec does.
func ClassOf(op string) OpClass {
	switch op {
	case OpWrite, OpCreate, OpSymlink, OpHardlink, OpUploadComplete:
		return OpEvent
	case OpRename, OpDelete, OpMkdir, OpCopy:
		return OpStructural
	case OpChmod:
		return OpSilent
	}
	return OpUnknown
}

// IsStructural reports whether a stream sends reset(structural_change) for op.
func IsStructural(op string) bool { return ClassOf(op) == OpStructural }
