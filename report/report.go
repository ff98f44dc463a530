package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seqgate/seqgate/ledger"
	"github.com/seqgate/seqgate/verifier"
)

// File names a run directory holds.
const (
	HTMLName     = "report.html"
	MarkdownName = "summary.md"
	SummaryName  = "summary.json"
	LedgerName   = "ledger.jsonl.gz"
)

// LoadSummary reads a summary.json written by seqgate verify or run, keeping the witnesses' field
// order for the tables.
func LoadSummary(path string) (*verifier.Summary, map[string][]json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var s verifier.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("%s: not a seqgate summary: %w", path, err)
	}
	if s.Verdict == "" {
		return nil, nil, fmt.Errorf("%s: not a seqgate summary: no verdict", path)
	}
	var raw struct {
		Witnesses map[string][]json.RawMessage `json:"witnesses"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, nil, fmt.Errorf("%s: witnesses: %w", path, err)
	}
	if raw.Witnesses == nil {
		raw.Witnesses = map[string][]json.RawMessage{}
	}
	return &s, raw.Witnesses, nil
}

// tee hands every record to the collector before the verifier sees it.
type tee struct {
	r *ledger.Reader
	c *Collector
}

func (t tee) Next() (*ledger.Record, error) {
	rec, err := t.r.Next()
	if err == nil {
		t.c.Observe(rec)
	}
	return rec, err
}

// Build reads the ledger files of one run in a single pass. With a summary that carries its anomaly
// timeline (the verifier's own, in seqgate run) the pass only collects the series; otherwise it also
// verifies, in the same pass, with opts: without a summary (s == nil) for everything, with one read
// from summary.json (which has no timeline) for the timeline alone.
func Build(paths []string, s *verifier.Summary, raw map[string][]json.RawMessage, opts verifier.Options) (Input, error) {
	r, err := ledger.Open(paths...)
	if err != nil {
		return Input{}, err
	}
	defer r.Close()
	return BuildFrom(r, sourceName(paths), s, raw, opts)
}

// BuildFrom is Build over an open reader; source names it on the page.
func BuildFrom(r *ledger.Reader, source string, s *verifier.Summary, raw map[string][]json.RawMessage, opts verifier.Options) (Input, error) {
	in := Input{Summary: s, Witnesses: raw, Source: source}
	if s != nil && s.Timeline != nil {
		d, err := Collect(r)
		if err != nil {
			return Input{}, err
		}
		d.AddTimeline(s.Timeline)
		in.Data = d
		return in, nil
	}
	c := NewCollector()
	v, err := verifier.VerifySource(tee{r, c}, opts)
	if err != nil {
		return Input{}, err
	}
	in.Data = c.Finish()
	in.Data.AddTimeline(v.Timeline)
	if s != nil {
		return in, nil // the summary given stands; this pass only gave its timeline
	}
	for _, w := range r.Warnings() {
		v.Warnings = append(v.Warnings, w.String())
	}
	in.Summary = v
	return in, nil
}

func sourceName(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return fmt.Sprintf("%s and %d more ledger files", paths[0], len(paths)-1)
}

// WriteFiles writes the report page to htmlPath and summary.md beside it (naming the page's path).
func WriteFiles(htmlPath string, in Input) error {
	if err := writeAtomic(htmlPath, func(w io.Writer) error { return WriteHTML(w, in) }); err != nil {
		return err
	}
	md := filepath.Join(filepath.Dir(htmlPath), MarkdownName)
	return writeAtomic(md, func(w io.Writer) error { return WriteMarkdown(w, in.Summary, in.Data, htmlPath) })
}

// writeAtomic writes through a temporary file so a reader never sees half a report.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ErrNoLedger is returned by FindLedger for a directory without a ledger.
var ErrNoLedger = errors.New("no ledger.jsonl.gz or ledger.jsonl in the run directory")

// FindLedger returns the ledger files of a run directory (ledger.jsonl.gz, else ledger.jsonl, else
// the shard ledgers ledger-*.jsonl*).
func FindLedger(dir string) ([]string, error) {
	for _, n := range []string{LedgerName, "ledger.jsonl"} {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return []string{p}, nil
		}
	}
	m, _ := filepath.Glob(filepath.Join(dir, "ledger-*.jsonl*"))
	if len(m) > 0 {
		return m, nil
	}
	return nil, fmt.Errorf("%s: %w", dir, ErrNoLedger)
}
