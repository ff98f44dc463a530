package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/seqgate/seqgate/harness/target"
)

// A listing is how a client resyncs after a reset: GET /v1/fs/<dir>?list=1 answers the direct
// children of one folder as {"entries": [{"name", "size", "isDir", "mtime", "revision", "mode"}]}
// (drive9's shape), with "next": "<name>" when the service pages (then the next page is asked for
// with &after=<name>; without it the answer is complete). The client walks folders itself.
//
// The answer is read token by token, one entry at a time, and each file entry goes to the caller
// at once: a listing of any length is never held whole (only the names of the folders still to
// walk are kept).

// Entry is one file a listing found.
type Entry struct {
	Path string // the file's full path: the folder listed and the entry's name
	Size int64
	Rev  int64
}

// listEntry is one element of an answer's "entries".
type listEntry struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	IsDir    bool   `json:"isDir"`
	Revision int64  `json:"revision"`
}

// Listing bounds: a single entry (or any other value of an answer) larger than maxListValue bytes,
// an entry name with a slash, more pages than maxListPages in one folder, or more folders than
// maxListDirs are a broken or hostile answer, and the listing fails naming it.
const (
	maxListValue = 1 << 20
	maxListPages = 1 << 20
	maxListDirs  = 1 << 20
)

// Lister lists a tenant's tree over one endpoint.
type Lister struct {
	Client *http.Client
	URL    string       // the endpoint's base URL
	Key    string       // the tenant's API key
	Wire   *target.Wire // where the listing is (nil: drive9's, target.Drive9Wire)
}

// List walks dir (a folder path ending in "/") and every folder below it, calling found for each
// file in the order the service answers; it returns how many files it found. It stops at the first
// error: of a request, of an answer, or of found.
func (l Lister) List(ctx context.Context, dir string, found func(Entry) error) (int64, error) {
	if !strings.HasPrefix(dir, "/") || !strings.HasSuffix(dir, "/") {
		return 0, fmt.Errorf("list %q: a folder path starts and ends with /", dir)
	}
	var n int64
	todo := []string{dir}
	for walked := 0; len(todo) > 0; walked++ {
		if walked >= maxListDirs {
			return n, fmt.Errorf("list %s: more than %d folders", dir, maxListDirs)
		}
		d := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		after := ""
		for page := 0; ; page++ {
			if page >= maxListPages {
				return n, fmt.Errorf("list %s: more than %d pages", d, maxListPages)
			}
			next, err := l.page(ctx, d, after, func(e listEntry) error {
				if e.IsDir {
					todo = append(todo, d+e.Name+"/")
					return nil
				}
				n++
				return found(Entry{Path: d + e.Name, Size: e.Size, Rev: e.Revision})
			})
			if err != nil {
				return n, err
			}
			if next == "" {
				break
			}
			if next == after {
				return n, fmt.Errorf("list %s: next %q repeats the page it answered", d, next)
			}
			after = next
		}
	}
	return n, nil
}

// page asks for one page of folder d after the name after, and returns the answer's next.
func (l Lister) page(ctx context.Context, d, after string, each func(listEntry) error) (string, error) {
	w := l.Wire
	if w == nil {
		w = target.Drive9Wire
	}
	u := w.ListURL(l.URL, escapePath(d), after)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", d, err)
	}
	req.Header.Set("Authorization", "Bearer "+l.Key)
	resp, err := l.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", d, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && after == "" {
		return "", nil // the folder does not exist (yet, or any more): nothing in it
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("list %s: HTTP %d", d, resp.StatusCode)
	}
	next, err := decodeListing(resp.Body, each)
	if err != nil {
		return "", fmt.Errorf("list %s: body: %w", d, err)
	}
	return next, nil
}

// escapePath escapes each segment of an absolute path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// decodeListing reads one answer, calling each for every entry as it is decoded, and returns its
// "next" ("" when absent). Members other than entries and next are skipped token by token.
func decodeListing(body io.Reader, each func(listEntry) error) (string, error) {
	win := &window{r: body}
	dec := json.NewDecoder(win)
	if err := delim(dec, '{'); err != nil {
		return "", err
	}
	next, sawEntries := "", false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		key, _ := tok.(string)
		win.reset()
		switch key {
		case "entries":
			sawEntries = true
			if err := delim(dec, '['); err != nil {
				return "", fmt.Errorf("entries: %w", err)
			}
			for i := 0; dec.More(); i++ {
				var e listEntry
				if err := dec.Decode(&e); err != nil {
					return "", fmt.Errorf("entries[%d]: %w", i, err)
				}
				if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
					return "", fmt.Errorf("entries[%d]: name %q is not one path segment", i, e.Name)
				}
				if err := each(e); err != nil {
					return "", err
				}
				win.reset()
			}
			if err := delim(dec, ']'); err != nil {
				return "", fmt.Errorf("entries: %w", err)
			}
		case "next":
			if err := dec.Decode(&next); err != nil {
				return "", fmt.Errorf("next: %w", err)
			}
		default:
			if err := skip(dec); err != nil {
				return "", fmt.Errorf("%s: %w", key, err)
			}
		}
		win.reset()
	}
	if err := delim(dec, '}'); err != nil {
		return "", err
	}
	if !sawEntries {
		return "", errors.New(`no "entries"`)
	}
	return next, nil
}

// delim reads one token and requires it to be d.
func delim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("want %q, got %v", d, tok)
	}
	return nil
}

// skip reads one value of any shape token by token, so an unknown member is never held whole.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// window fails a read once maxListValue bytes were read since the last reset: the decoder reads on
// demand, so this bounds what one value (one entry, one token) can make it buffer, to maxListValue
// and what the decoder had read ahead when the previous value ended.
type window struct {
	r    io.Reader
	read int
}

func (w *window) Read(p []byte) (int, error) {
	room := maxListValue - w.read
	if room <= 0 {
		return 0, fmt.Errorf("a value longer than %d bytes", maxListValue)
	}
	if len(p) > room {
		p = p[:room] // never read past the bound: the decoder must ask again, and is refused
	}
	n, err := w.r.Read(p)
	w.read += n
	return n, err
}

func (w *window) reset() { w.read = 0 }
