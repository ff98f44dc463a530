package ledger

import "fmt"

// LineError is a bad line in a ledger: it names the file, the 1-based line number and, when one field
// is to blame, that field. Every content problem the Reader finds (other than a torn last line and an
// unknown kind, which are warnings) is a *LineError.
type LineError struct {
	File  string // the path as given to Open ("stdin" for "-")
	Line  int    // 1-based line number in File
	Field string // the JSON field at fault, or "" when the line as a whole is bad
	Msg   string // what is wrong, e.g. `want integer, got "abc"`
}

// Error renders as `file:line: field "name": msg` (or `file:line: msg` without a field).
func (e *LineError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: field %q: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Warning is a problem the Reader tolerated: a torn last line (a harness cut short), a truncated gzip
// stream, or a record of an unknown kind (skipped).
type Warning struct {
	File string
	Line int
	Msg  string
}

// String renders as `file:line: msg`.
func (w Warning) String() string { return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg) }
