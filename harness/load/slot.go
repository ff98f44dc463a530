package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// UnicodeSuffix ends the path of a write_unicode mutation (valid UTF-8, not ASCII).
const UnicodeSuffix = "-日本-é"

// InvalidUTF8Suffix ends the URL path of a write_invalid_utf8 mutation, percent-encoded as sent:
// the decoded path ends in byte 0xFF, never valid UTF-8. The ledger records it in this escaped
// form (a ledger string is UTF-8); a correct service answers 400 and the mutation is not acked.
const InvalidUTF8Suffix = "-%FF"

// slot is one request slot of one tenant of a block: it sends one mutation at a time and keeps
// what every send of that tenant shares, and the buffers one send reuses, so the time between an
// arrival's wake-up and its send (the schedule slip) is spent on the request alone.
type slot struct {
	d         *Driver
	t         Tenant
	timeout   time.Duration
	batchSize int      // files per batch op (load.batch_size)
	dir       string   // the tenant's path prefix: /<prefix>/<run_id>/<tenant>/
	path      []byte   // the tenant's path prefix and t<tenant index>.b<block index>., with room for the arrival's index
	auth      []string // the Authorization header's value, shared read-only by the slot's requests
	rec       ledger.Record
	body      answerBuf
}

// answerBuf receives an answer's body, kept only for an error's text; a slot reuses one.
type answerBuf struct {
	bytes.Buffer
	limit io.LimitedReader
}

func (d *Driver) newSlot(t Tenant, b Block) *slot {
	dir := d.Path(t.ID, "")
	return &slot{d: d, t: t, timeout: b.Load.Timeout.D(), batchSize: b.Load.BatchSize, dir: dir,
		path: append(make([]byte, 0, len(dir)+48), dir+"t"+strconv.Itoa(t.Index)+".b"+strconv.Itoa(b.Index)+"."...),
		auth: []string{"Bearer " + t.Key}}
}

// send performs one mutation and writes its mut record. Ops that need an existing file (rename,
// copy, chmod, delete) fall back to a write while the tenant has none. The record's t is taken
// just before the request goes out, after everything it needs is built.
func (s *slot) send(a arrival) {
	d, t, op := s.d, s.t, a.op
	path := string(strconv.AppendInt(s.path, int64(a.i), 10)) // one string for the path and the mid
	mid := path[len(s.dir):]
	if op == "batch" {
		d.sendBatch(t, s.timeout, mid, s.batchSize, a.due)
		return
	}
	var src string
	switch op {
	case ledger.OpRename, ledger.OpDelete:
		src = d.take(t.ID, a.pick, true)
	case ledger.OpCopy, ledger.OpChmod:
		src = d.take(t.ID, a.pick, false)
	}
	if src == "" && op != ledger.OpWrite && op != ledger.OpMkdir && op != "write_unicode" && op != "write_invalid_utf8" {
		op = ledger.OpWrite
	}
	body := io.Reader(nil)
	rawSuffix := "" // sent after the escaped path, not part of the ledger's path
	switch op {
	case ledger.OpWrite:
		body = strings.NewReader("seqgate " + mid + "\n")
	case "write_unicode": // a valid non-ASCII path: stored and delivered byte for byte
		op, path = ledger.OpWrite, path+UnicodeSuffix
		body = strings.NewReader("seqgate " + mid + "\n")
	case "write_invalid_utf8": // an invalid UTF-8 path: the service must refuse it (4xx), never ack it
		op, rawSuffix = ledger.OpWrite, InvalidUTF8Suffix
		path += InvalidUTF8Suffix // the ledger's path is the escaped form (a ledger string is UTF-8)
		body = strings.NewReader("seqgate " + mid + "\n")
	case ledger.OpChmod: // silent op on an existing file: its path is that file's
		path, src = src, ""
	case ledger.OpDelete:
		path, src = src, ""
	}
	wire := d.wire()
	opReq := wire.Ops[op] // the service's request for the op (harness/target.Wire)
	method, query, header := opReq.Method, opReq.Query, opReq.SourceHeader
	// The sink copies what it keeps: one record per slot serves every send.
	rec := &s.rec
	*rec = ledger.Record{K: ledger.KindMut, MID: mid, Tenant: t.ID, Op: op, Path: path, Src: src,
		IntendedT: a.due.Sub(d.cfg.Start).Nanoseconds()}
	eps := d.cfg.Endpoints()
	if len(eps) == 0 {
		rec.T = d.now()
		rec.DoneT, rec.Res, rec.Err = rec.T, ledger.ResErr, "no endpoint up"
		d.Stats.Sent.Add(1)
		d.Stats.Err.Add(1)
		_ = d.cfg.Sink.Write(rec)
		return
	}
	ep := eps[d.rr.Add(1)%uint64(len(eps))]
	rec.Pod = ep.Name
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(dialScoped(ctx), method, ep.URL+wire.FSPath+escapePath(strings.TrimSuffix(path, rawSuffix))+rawSuffix+query, body)
	if err != nil {
		panic(err) // our own URL: a bug, not an input
	}
	req.Header["Authorization"] = s.auth
	if header != "" {
		req.Header.Set(header, rec.Src)
	}
	rec.T = d.now()
	d.Stats.Sent.Add(1)
	d.answer(ctx, rec, req, &s.body)
	if rec.Res == ledger.ResOK {
		switch op {
		case ledger.OpWrite, ledger.OpCopy, ledger.OpRename:
			d.keep(t.ID, path)
		}
	}
	rec.DoneT = d.now()
	_ = d.cfg.Sink.Write(rec)
}

// answer sends req and fills rec's result (res, status, err) and the stats. buf receives the
// answer's body (kept only for an error's text): a slot passes the one it reuses.
func (d *Driver) answer(ctx context.Context, rec *ledger.Record, req *http.Request, buf *answerBuf) {
	resp, err := d.cfg.Client.Do(req)
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		rec.Res, rec.Err = ledger.ResTimeout, err.Error()
		d.Stats.Timeout.Add(1)
	case err != nil:
		rec.Res, rec.Err = ledger.ResErr, err.Error()
		d.Stats.Err.Add(1)
	default:
		buf.Reset()
		buf.limit = io.LimitedReader{R: resp.Body, N: 1 << 20}
		_, _ = buf.ReadFrom(&buf.limit)
		buf.limit.R = nil
		resp.Body.Close()
		rec.Status = resp.StatusCode
		if resp.StatusCode/100 == 2 {
			rec.Res = ledger.ResOK
			d.Stats.OK.Add(1)
		} else {
			body := buf.Bytes()
			rec.Res, rec.Err = ledger.ResErr, strings.TrimSpace(string(body[:min(len(body), 300)]))
			d.Stats.Err.Add(1)
		}
	}
}

// escapePath percent-escapes each segment of p. Paths made only of unreserved characters (every
// path the harness writes, but for the unicode and invalid UTF-8 ops) are returned as they are.
func escapePath(p string) string {
	plain := true
	for i := 0; i < len(p) && plain; i++ {
		c := p[i]
		plain = c == '/' || c == '-' || c == '.' || c == '_' || c == '~' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	if plain {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
