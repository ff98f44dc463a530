package proxy

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// server is a toxiproxy server (cmd/server of github.com/Shopify/toxiproxy/v2, or its Docker image)
// driven over its HTTP API.
type server struct {
	client *toxiclient.Client
	host   string // the API's host: where this process reaches the server's proxies
	local  bool   // the server is on loopback: it can reach a counting relay of this process
}

// NewServerSet returns an empty set whose proxies live on the toxiproxy server whose HTTP API is at
// apiURL (e.g. http://127.0.0.1:8474, or http://toxiproxy:8474 in docker-compose.yml). The server's
// proxies listen on its loopback when apiURL is a loopback address (and then count bytes through a
// relay of this process, as in-process proxies do), else on every interface, reached at apiURL's
// host (no byte counts: the server cannot reach this process's loopback). The server must answer now.
func NewServerSet(apiURL string) (*Set, error) {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--toxiproxy %q: want the toxiproxy server's API URL, e.g. http://127.0.0.1:8474", apiURL)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	srv := &server{client: toxiclient.NewClient(strings.TrimRight(apiURL, "/")), host: host,
		local: host == "localhost" || (ip != nil && ip.IsLoopback())}
	if _, err := srv.client.Proxies(); err != nil {
		return nil, fmt.Errorf("--toxiproxy %s: the toxiproxy server does not answer: %w", apiURL, err)
	}
	return &Set{server: srv}, nil
}

func (s *server) add(name, upstream string) (*Proxy, error) {
	if old, err := s.client.Proxy(name); err == nil {
		if err := old.Delete(); err != nil {
			return nil, fmt.Errorf("delete the earlier proxy of that name on the toxiproxy server: %w", err)
		}
	}
	listen := "0.0.0.0:0"
	var cnt *counter
	if s.local {
		listen = "127.0.0.1:0"
		var err error
		if cnt, err = newCounter(upstream); err != nil {
			return nil, err
		}
		upstream = cnt.addr()
	}
	rp, err := s.client.CreateProxy(name, listen, upstream)
	if err != nil {
		if cnt != nil {
			cnt.close()
		}
		return nil, fmt.Errorf("create on the toxiproxy server: %w", err)
	}
	_, port, err := net.SplitHostPort(rp.Listen)
	if err != nil {
		_ = rp.Delete()
		if cnt != nil {
			cnt.close()
		}
		return nil, fmt.Errorf("toxiproxy server answered listen %q: %w", rp.Listen, err)
	}
	return &Proxy{Name: name, remote: rp, addr: net.JoinHostPort(s.host, port), cnt: cnt}, nil
}

// addRemoteToxic adds a toxic given as toxiproxy's JSON toxic object through the server's API.
func addRemoteToxic(p *toxiclient.Proxy, toxicJSON []byte) error {
	var t toxiclient.Toxic
	if err := json.Unmarshal(toxicJSON, &t); err != nil {
		return fmt.Errorf("toxic %s: %w", toxicJSON, err)
	}
	_, err := p.AddToxic(t.Name, t.Type, t.Stream, t.Toxicity, t.Attributes)
	return err
}

// removeRemoteToxic removes a toxic; the API's 404 (already gone) is not an error.
func removeRemoteToxic(p *toxiclient.Proxy, name string) error {
	err := p.RemoveToxic(name)
	if err != nil && strings.Contains(err.Error(), "HTTP 404") {
		return nil
	}
	return err
}

// AdoptServerSet returns a set holding every proxy the toxiproxy server at apiURL already has (made
// by its -config file, e.g. in docker-compose.yml, in front of an external service's databases),
// reached at apiURL's host. Close leaves them on the server; their byte counts are not known.
func AdoptServerSet(apiURL string) (*Set, error) {
	s, err := NewServerSet(apiURL)
	if err != nil {
		return nil, err
	}
	ps, err := s.server.client.Proxies()
	if err != nil {
		return nil, fmt.Errorf("--toxiproxy %s: list proxies: %w", apiURL, err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("--toxiproxy %s: the server has no proxies to adopt (give it a -config file)", apiURL)
	}
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rp := ps[n]
		_, port, err := net.SplitHostPort(rp.Listen)
		if err != nil {
			return nil, fmt.Errorf("--toxiproxy %s: proxy %s listens on %q: %w", apiURL, n, rp.Listen, err)
		}
		s.proxies = append(s.proxies, &Proxy{Name: n, remote: rp, addr: net.JoinHostPort(s.server.host, port), adopted: true})
	}
	return s, nil
}

// Names returns the proxies' names in order.
func (s *Set) Names() []string {
	var out []string
	for _, p := range s.All() {
		out = append(out, p.Name)
	}
	return out
}
