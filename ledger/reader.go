package ledger

import (
	"container/heap"
	"errors"
	"io"
	"slices"
)

// Reader streams the records of one run out of one or more ledger files. With several files (one per
// harness shard) it emits a single run header, then every run record merged by the time it was
// observed, then the post-run records (persisted, consumer) of each file in turn and one merged end.
type Reader struct {
	srcs  []*source
	in    *interner
	state int
	hdr   Record // the (merged) run header

	h    srcHeap // active sources of the run phase, by head time
	last *source // the source whose head Next returned last: advanced on the next call

	post      int       // post phase: index of the source being drained
	ends      []Record  // post phase: each file's end record
	merged    Record    // post phase: the merged audit, then the merged end
	auditDone bool      // post phase: the merged audit was returned (or there is none)
	warnings  []Warning // first maxWarnings warnings
	dropped   int       // warnings beyond maxWarnings
	err       error     // sticky: once Next fails it keeps failing

	// owner, with several files: tenant id -> the file whose run record declares it.
	owner map[string]*source
}

const (
	stateHeader = iota
	stateRun
	statePost
	stateDone
)

// maxWarnings bounds the warnings kept (a ledger full of unknown kinds must not fill memory).
const maxWarnings = 100

// Open opens the ledger files of one run ("-" reads stdin; ".gz" names or gzip magic bytes mean
// gzip). It fails when a file cannot be opened; content errors surface from Next.
func Open(paths ...string) (*Reader, error) {
	if len(paths) == 0 {
		return nil, errors.New("ledger: no ledger file given")
	}
	r := newReader()
	for _, p := range paths {
		s, err := openSource(p, r)
		if err != nil {
			r.Close()
			return nil, err
		}
		s.idx = len(r.srcs)
		r.srcs = append(r.srcs, s)
	}
	return r, nil
}

// NewReader reads one ledger from rd; name is used in errors and warnings. The caller keeps
// ownership of rd (closing the Reader does not close it).
func NewReader(name string, rd io.Reader) (*Reader, error) {
	r := newReader()
	s, err := newSource(name, io.NopCloser(rd), r)
	if err != nil {
		return nil, err
	}
	r.srcs = []*source{s}
	return r, nil
}

func newReader() *Reader { return &Reader{in: newInterner(1 << 16)} }

// Next returns the next record, or io.EOF after the last one. The returned Record (and its maps and
// slices) may be reused by the following call: copy what you keep. Errors are *LineError for bad
// content, or a wrapped I/O error; after an error Next keeps returning it.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		if err == io.EOF {
			r.Close()
		}
	}
	return rec, err
}

// NextInto is Next, decoding the record into dst where it can instead of into the Reader's own
// Record: a caller that keeps records (a batch handed to another goroutine) then saves copying each
// one. It returns dst or, where the reader holds the record itself (the run header, the records of
// several files merged), its own Record, which the caller must copy as with Next. dst is zeroed
// before it is filled; its maps and slices are never reused.
func (r *Reader) NextInto(dst *Record) (*Record, error) {
	if r.state == stateHeader || len(r.srcs) != 1 {
		return r.Next()
	}
	s := r.srcs[0] // Next may close the Reader, which empties r.srcs
	s.out = dst
	rec, err := r.Next()
	s.out = nil
	return rec, err
}

// BorrowStrings makes the Path and MID of the records Next returns borrowed: strings over the
// reader's line buffer, valid only until the following call to Next, instead of copies. A caller that
// keeps either must copy it (strings.Clone); in return reading allocates nothing per path. Call it
// before the first Next.
func (r *Reader) BorrowStrings() {
	for _, s := range r.srcs {
		s.dec.borrow = true
	}
}

// Warnings returns the problems tolerated so far (torn last line, truncated gzip, unknown kinds).
func (r *Reader) Warnings() []Warning {
	out := slices.Clone(r.warnings)
	if r.dropped > 0 {
		out = append(out, Warning{File: "", Line: 0, Msg: itoa(int64(r.dropped)) + " more warnings not shown"})
	}
	return out
}

// Close closes the files Open opened. Reading after Close is an error.
func (r *Reader) Close() error {
	var first error
	for _, s := range r.srcs {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	r.srcs = r.srcs[:0:0]
	if r.err == nil {
		r.err = errors.New("ledger: reader closed")
	}
	return first
}

func (r *Reader) warn(file string, line int, msg string) {
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, Warning{File: file, Line: line, Msg: msg})
		return
	}
	r.dropped++
}

func (r *Reader) next() (*Record, error) {
	switch r.state {
	case stateHeader:
		return r.header()
	case stateRun:
		if len(r.srcs) == 1 {
			return r.nextSingle()
		}
		return r.nextMerged()
	case statePost:
		return r.nextPost()
	}
	return nil, io.EOF
}

// header reads every file's first record, which must be a run record, and returns one header. With
// several files they must be the ledgers of one run (shardset.go): the same run, disjoint tenants and,
// when sharded, every shard exactly once; the header unites their tenants and pods, starts at the
// earliest start_unix_ns, and each file's times are shifted onto that clock.
func (r *Reader) header() (*Record, error) {
	for i, s := range r.srcs {
		rec, err := s.next()
		if err == io.EOF {
			return nil, &LineError{File: s.name, Line: s.line + 1, Field: "k", Msg: `empty ledger: want a "run" record first`}
		}
		if err != nil {
			return nil, err
		}
		if rec.K != KindRun {
			return nil, &LineError{File: s.name, Line: s.line, Field: "k", Msg: `first record must be k "run", got ` + quote(rec.K)}
		}
		s.hdr = *rec
		s.hdr.Tenants = slices.Clone(rec.Tenants)
		s.hdr.Pods = slices.Clone(rec.Pods)
		if err := s.readTenants(); err != nil {
			return nil, err
		}
		if i == 0 {
			r.hdr = s.hdr
			r.hdr.Tenants = slices.Clone(s.hdr.Tenants)
			r.hdr.Pods = slices.Clone(s.hdr.Pods)
		}
	}
	if err := r.checkSet(); err != nil {
		return nil, err
	}
	r.state = stateRun
	if len(r.srcs) == 1 {
		s := r.srcs[0]
		s.declared = make(map[string]bool, len(s.hdr.Tenants))
		for _, t := range s.hdr.Tenants {
			s.declared[t.ID] = true
		}
	}
	if len(r.srcs) > 1 {
		r.unite()
		for _, s := range r.srcs {
			if err := r.advance(s); err != nil {
				return nil, err
			}
		}
	}
	return &r.hdr, nil
}

// nextSingle is the run phase of a single file: records pass through in file order.
func (r *Reader) nextSingle() (*Record, error) {
	s := r.srcs[0]
	rec, err := s.next()
	if err != nil {
		return nil, err
	}
	if err := checkRunPhase(s, rec); err != nil {
		return nil, err
	}
	if err := s.checkDeclared(rec); err != nil {
		return nil, err
	}
	if s.spec.postRun { // s.spec is rec's kind
		r.state = statePost
		s.ended = rec.K == KindEnd
	}
	return rec, nil
}

func checkRunPhase(s *source, rec *Record) error {
	switch rec.K {
	case KindRun:
		return &LineError{File: s.name, Line: s.line, Field: "k", Msg: `a second "run" record (only the first line may be one)`}
	case KindTenant:
		return errLateTenant(s)
	}
	return nil
}

// orderKey is the time a record was observed: a mutation is written when its answer arrives
// (done_t); every other run-phase record at t.
func orderKey(rec *Record) int64 {
	switch rec.K {
	case KindMut:
		return rec.DoneT
	case KindDrop:
		return rec.IntendedT // a drop has no t: it is noted when its arrival was due
	}
	return rec.T
}

// advance reads s's next record; a source whose head is a post-run record (or EOF) leaves the heap.
// Audit records are held back for the merged audit (shardset.go).
func (r *Reader) advance(s *source) error {
	rec, err := s.nextHeld()
	if err == io.EOF {
		s.eof = true
		s.rec = Record{}
		return nil
	}
	if err != nil {
		return err
	}
	if err := checkRunPhase(s, rec); err != nil {
		return err
	}
	if IsPostRun(rec.K) {
		return nil // parked: its head waits for the post phase
	}
	heap.Push(&r.h, s)
	return nil
}

// nextMerged is the run phase of several files: a k-way merge on orderKey that keeps each file's own
// order (ties go to the earlier file).
func (r *Reader) nextMerged() (*Record, error) {
	if r.last != nil {
		s := r.last
		r.last = nil
		if err := r.advance(s); err != nil {
			return nil, err
		}
	}
	if r.h.Len() == 0 {
		r.state = statePost
		return r.nextPost()
	}
	s := heap.Pop(&r.h).(*source)
	r.last = s
	return &s.rec, nil
}

// nextPost drains the post-run records: for a single file they pass through (anything after them
// but more post-run records is an error); for several files each file's persisted and consumer
// records in turn, then one end merged from all (only if every file has one).
func (r *Reader) nextPost() (*Record, error) {
	if len(r.srcs) == 1 {
		s := r.srcs[0]
		rec, err := s.next()
		if err != nil {
			return nil, err
		}
		if err := r.checkPost(s, rec); err != nil {
			return nil, err
		}
		if err := s.checkDeclared(rec); err != nil {
			return nil, err
		}
		return rec, nil
	}
	for r.post < len(r.srcs) {
		s := r.srcs[r.post]
		var rec *Record
		if r.last == s {
			// s's parked head was returned by the previous call: read on.
			r.last = nil
			var err error
			if rec, err = s.nextHeld(); err == io.EOF {
				r.post++
				continue
			} else if err != nil {
				return nil, err
			}
		} else if s.rec.K != "" {
			rec = &s.rec // the parked head
		} else {
			r.post++
			continue
		}
		if err := r.checkPost(s, rec); err != nil {
			return nil, err
		}
		r.last = s
		if rec.K == KindEnd {
			r.ends = append(r.ends, *rec)
			continue
		}
		return rec, nil
	}
	if rec := r.mergedAudit(); rec != nil {
		return rec, nil
	}
	r.state = stateDone
	if len(r.ends) != len(r.srcs) {
		return nil, io.EOF // some file was cut short: no end record, the run is inconclusive
	}
	r.merged = Record{K: KindEnd, Drained: true}
	for _, e := range r.ends {
		r.merged.T = max(r.merged.T, e.T)
		r.merged.Drained = r.merged.Drained && e.Drained
		if r.merged.Reason == "" {
			r.merged.Reason = e.Reason
		}
	}
	return &r.merged, nil
}

// checkPost enforces the spec's order: after the first post-run record only post-run records follow,
// and nothing follows end.
func (r *Reader) checkPost(s *source, rec *Record) error {
	if !IsPostRun(rec.K) && !IsAnywhere(rec.K) {
		return &LineError{File: s.name, Line: s.line, Field: "k",
			Msg: "a " + quote(rec.K) + " record after the post-run records (persisted, consumer and end come last)"}
	}
	if s.ended {
		return &LineError{File: s.name, Line: s.line, Field: "k", Msg: "a " + quote(rec.K) + ` record after "end" (end is the last line)`}
	}
	s.ended = rec.K == KindEnd
	return nil
}

// srcHeap orders sources by their head's orderKey, then by file index.
type srcHeap []*source

func (h srcHeap) Len() int { return len(h) }
func (h srcHeap) Less(i, j int) bool {
	ki, kj := orderKey(&h[i].rec), orderKey(&h[j].rec)
	if ki != kj {
		return ki < kj
	}
	return h[i].idx < h[j].idx
}
func (h srcHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *srcHeap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *srcHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
