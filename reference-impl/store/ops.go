package store

// The ops an Event carries (fs_events.op): the filesystem mutations of design 000. They are the
// service's side of the wire; seqgate's ledger names the same ops (ledger.OpWrite, ...) on its side.
const (
	OpWrite  = "write"  // PUT: the file's new content (file_changed)
	OpCreate = "create" // POST ?create: an empty file (file_changed)
	OpRename = "rename" // POST ?rename: structural
	OpCopy   = "copy"   // POST ?copy: structural
	OpDelete = "delete" // DELETE: structural
	OpMkdir  = "mkdir"  // POST ?mkdir: structural
	OpChmod  = "chmod"  // POST ?chmod: silent (no event)
)

// IsStructural reports whether a stream sends op as reset(structural_change).
func IsStructural(op string) bool {
	switch op {
	case OpRename, OpDelete, OpMkdir, OpCopy:
		return true
	}
	return false
}

// opString is the op b names as one of the constants above (no allocation), or a copy of b.
func opString(b []byte) string {
	switch string(b) {
	case OpWrite:
		return OpWrite
	case OpCreate:
		return OpCreate
	case OpRename:
		return OpRename
	case OpCopy:
		return OpCopy
	case OpDelete:
		return OpDelete
	case OpMkdir:
		return OpMkdir
	case OpChmod:
		return OpChmod
	}
	return string(b)
}
