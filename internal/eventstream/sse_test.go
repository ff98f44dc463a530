package eventstream

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func readAll(t testing.TB, s string) []Event {
	r := NewReader(strings.NewReader(s))
	var out []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{"drive9 frame", "event: file_changed\ndata: {\"seq\":2}\n\n",
			[]Event{{Type: "file_changed", Data: `{"seq":2}`}}},
		{"default type, CRLF", "data: x\r\n\r\n", []Event{{Type: "message", Data: "x"}}},
		{"lone CR", "event: a\rdata: 1\r\r", []Event{{Type: "a", Data: "1"}}},
		{"BOM dropped once", "\xEF\xBB\xBFdata: a\n\n", []Event{{Type: "message", Data: "a"}}},
		{"multi-line data", "data: a\ndata:b\ndata\n\n", []Event{{Type: "message", Data: "a\nb\n"}}},
		{"only one space stripped", "data:  two\n\n", []Event{{Type: "message", Data: " two"}}},
		{"comment ignored", ": ping\n\ndata: z\n\n", []Event{{Type: "message", Data: "z"}}},
		{"empty data not dispatched, type reset", "event: x\n\ndata: y\n\n", []Event{{Type: "message", Data: "y"}}},
		{"id persists, NUL id ignored", "id: 7\ndata: a\n\nid: 8\x009\ndata: b\n\n",
			[]Event{{Type: "message", Data: "a", ID: "7"}, {Type: "message", Data: "b", ID: "7"}}},
		{"retry digits only", "retry: 3000\nretry: 1x\ndata: a\n\n", []Event{{Type: "message", Data: "a", Retry: 3000}}},
		{"unterminated event dropped", "data: a\n\ndata: b\n", []Event{{Type: "message", Data: "a"}}},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []Event{{Type: "message", Data: "a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := readAll(t, c.in); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// The CR of a CRLF split across reads must not produce a blank line.
func TestCRLFAcrossReads(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\ndata: b\r"), strings.NewReader("\n\r\n")))
	ev, err := r.Next()
	if err != nil || ev.Data != "a\nb" {
		t.Fatalf("got %#v %v", ev, err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("event: reset\ndata: {\"seq\":0}\n\n")
	f.Add("\xEF\xBB\xBFdata: a\r\ndata: b\r\r: c\nid: 1\nretry: 10\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		evs := readAll(t, s)
		// Re-encoding the dispatched events must parse back to the same events.
		var b strings.Builder
		for _, e := range evs {
			if strings.ContainsAny(e.Type, "\r\n") {
				t.Fatalf("type with line break: %q", e.Type)
			}
			b.WriteString("event: " + e.Type + "\n")
			for _, l := range strings.Split(e.Data, "\n") {
				if strings.ContainsRune(l, '\r') {
					t.Fatalf("data line with CR: %q", l)
				}
				b.WriteString("data: " + l + "\n")
			}
			b.WriteString("\n")
		}
		again := readAll(t, b.String())
		if len(again) != len(evs) {
			t.Fatalf("round trip: %d events, then %d", len(evs), len(again))
		}
		for i := range evs {
			if again[i].Type != evs[i].Type || again[i].Data != evs[i].Data {
				t.Fatalf("round trip %d: %#v vs %#v", i, evs[i], again[i])
			}
		}
	})
}

// chunks hands out at most n bytes per Read and counts the buffer sizes it was asked to fill.
type chunks struct {
	r     io.Reader
	n     int
	sizes map[int]int
}

func (c *chunks) Read(p []byte) (int, error) {
	c.sizes[len(p)]++
	return c.r.Read(p[:min(len(p), c.n)])
}

// TestReadSizes: whatever sizes the stream arrives in (a byte at a time, just under, at and over the
// small buffer, bigger than the big one), the events are those of the stream read at once. A stream
// whose reads fill the small buffer is read into the big one; one whose reads never fill it is
// never read into the big one (an idle stream holds only the small buffer), and a stream that
// quietens after a busy spell goes back to the small one.
func TestReadSizes(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString("event: file_changed\r\ndata: {\"seq\":" + strings.Repeat("7", i%40) + "}\n\n: keep-alive\r\r")
	}
	stream := b.String()
	want := readAll(t, stream)
	if len(want) != 2000 {
		t.Fatalf("%d events, want 2000", len(want))
	}
	for _, c := range []struct {
		chunk        int
		big, smallTo bool // reads into the big buffer expected; back to the small one after them
	}{
		{chunk: 1}, {chunk: smallBuf - 1}, {chunk: smallBuf, big: true, smallTo: true}, {chunk: smallBuf + 1, big: true, smallTo: true},
		{chunk: 3 * bigBuf, big: true},
	} {
		src := &chunks{r: strings.NewReader(stream), n: c.chunk, sizes: map[int]int{}}
		r := NewReader(src)
		var got []Event
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chunks of %d: the events differ from the stream's read at once", c.chunk)
		}
		if (src.sizes[bigBuf] > 0) != c.big {
			t.Fatalf("chunks of %d: reads by buffer size %v, want the big buffer used: %v", c.chunk, src.sizes, c.big)
		}
		if c.smallTo && src.sizes[smallBuf] < 2 {
			t.Fatalf("chunks of %d: reads by buffer size %v, want reads into the small buffer between big ones", c.chunk, src.sizes)
		}
	}
}
