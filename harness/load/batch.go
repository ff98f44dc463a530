package load

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seqgate/seqgate/ledger"
)

// sendBatch performs one batch op: size files written by one POST /v1/fs:batch-write, whose batch
// id is mid. Each file is a mutation of its own in the ledger (mid.0, mid.1, ...: one path each, so
// events still match mutations by (tenant, path)), and every one of them carries batch = mid and
// the request's times and answer: they are acked, or not, together.
func (d *Driver) sendBatch(t Tenant, timeout time.Duration, mid string, size int, due time.Time) {
	type file struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	body := struct {
		Batch string `json:"batch"`
		Files []file `json:"files"`
	}{Batch: mid}
	recs := make([]ledger.Record, size)
	for i := range recs {
		fm := mid + "." + strconv.Itoa(i)
		recs[i] = ledger.Record{K: ledger.KindMut, MID: fm, Tenant: t.ID, Op: ledger.OpWrite, Path: d.Path(t.ID, fm),
			IntendedT: due.Sub(d.cfg.Start).Nanoseconds(), Batch: mid}
		body.Files = append(body.Files, file{recs[i].Path, "seqgate " + fm + "\n"})
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // strings only
	}
	var res ledger.Record // the answer every file's record shares
	eps := d.cfg.Endpoints()
	d.Stats.Sent.Add(1)
	if len(eps) == 0 {
		res.T = d.now()
		res.DoneT, res.Res, res.Err = res.T, ledger.ResErr, "no endpoint up"
		d.Stats.Err.Add(1)
	} else {
		ep := eps[d.rr.Add(1)%uint64(len(eps))]
		res.Pod = ep.Name
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(dialScoped(ctx), http.MethodPost, ep.URL+d.wire().BatchPath, strings.NewReader(string(b)))
		if err != nil {
			panic(err) // our own URL
		}
		req.Header.Set("Authorization", "Bearer "+t.Key)
		req.Header.Set("Content-Type", "application/json")
		res.T = d.now()
		d.answer(ctx, &res, req, new(answerBuf))
		res.DoneT = d.now()
	}
	for i := range recs {
		r := &recs[i]
		r.T, r.DoneT, r.Res, r.Status, r.Err, r.Pod = res.T, res.DoneT, res.Res, res.Status, res.Err, res.Pod
		if r.Res == ledger.ResOK {
			d.keep(t.ID, r.Path)
		}
		_ = d.cfg.Sink.Write(r)
	}
}
