package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

func TestServeLive(t *testing.T) {
	var stderr bytes.Buffer
	m, stop, err := serveLive("127.0.0.1:0", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m.Observe(&ledger.Record{K: ledger.KindMut, Res: ledger.ResOK, IntendedT: 1, T: 2})
	m.Observe(&ledger.Record{K: ledger.KindFault, ID: "f1", Kind: "meta_db_down", Phase: "start"})
	url := strings.TrimSpace(strings.TrimPrefix(stderr.String(), "seqgate: live metrics at "))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"seqgate_mutations_acked_total 1", `seqgate_faults_active{kind="meta_db_down"} 1`, "seqgate_consumer_lag_events 0"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if _, _, err := serveLive("not-an-address", io.Discard); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("bad address: %v, want an error naming --metrics-addr", err)
	}
}
