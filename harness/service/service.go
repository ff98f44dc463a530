// Package service holds the services seqgate ships, one file each (eventlogd.go, drive9.go,
// generic.go). A service is one Def: its name, its target profile (how it provisions tenants and
// reports them ready, its wire, where its tenants' events live) and, when seqgate can start it, its
// pod profile (binary, args, env, readiness, metrics, loss counters). Every list of service names,
// every message naming the allowed ones and the command line's --target-profile help come from a
// Registry. Each file ships its own service (its init calls ship), so adding a service is writing
// its file and nothing else.
package service

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/target"
)

// Def is one service, in one value. Its Name is the --target-profile name; the registry copies it
// into the target profile and the pod profile (their own Name fields are not written).
type Def struct {
	Name   string
	Target target.Service
	// Pods is how seqgate starts the service's pods (nil: it does not; only --target runs against
	// one started by its operator).
	Pods *podprofile.Profile
}

// Registry is an explicit list of services; the first is the default.
type Registry []*Def

// Shipped is the services seqgate ships, the default (eventlogd) first, the others by name. Each
// service's file adds itself (ship, from its init); nothing else lists them.
var Shipped Registry

// defaultService is the service a run uses when no --target-profile names one.
const defaultService = Eventlogd

// ship adds d to Shipped, keeping the default first and the rest in name order. A second service of
// one name is a programming error, caught at start-up.
func ship(d *Def) {
	for _, o := range Shipped {
		if o.Name == d.Name {
			panic("service: two services named " + d.Name)
		}
	}
	Shipped = append(Shipped, d)
	slices.SortStableFunc(Shipped, func(a, b *Def) int {
		if (a.Name == defaultService) != (b.Name == defaultService) {
			if a.Name == defaultService {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// With is the registry with more services after its own (a program that runs seqgate as a library,
// or a test, adds its service so).
func (r Registry) With(d ...*Def) Registry {
	return append(append(Registry(nil), r...), d...)
}

// Names lists every service, the default first.
func (r Registry) Names() []string {
	out := make([]string, 0, len(r))
	for _, d := range r {
		out = append(out, d.Name)
	}
	return out
}

// PodNames lists the services seqgate can start pods of.
func (r Registry) PodNames() []string {
	var out []string
	for _, d := range r {
		if d.Pods != nil {
			out = append(out, d.Name)
		}
	}
	return out
}

// Lookup finds the service name names ("" = the default); an unknown name is an error listing them.
func (r Registry) Lookup(name string) (*Def, error) {
	if name == "" && len(r) > 0 {
		return r[0], nil
	}
	for _, d := range r {
		if d.Name == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("--target-profile %q: unknown (allowed: %s)", name, strings.Join(r.Names(), ", "))
}

// Profile resolves the target profile o names (o.Service, else the service o.Profile names); audit
// says whether the run reads the service's database (--dsn given).
func (r Registry) Profile(o target.Options, audit bool) (*target.Profile, error) {
	if o.Service == nil {
		d, err := r.Lookup(o.Profile)
		if err != nil {
			return nil, err
		}
		o.Service = d.target()
	}
	return target.New(o, audit)
}

// Pods is the pod profile of the service name names ("" = the default), checked and with its
// defaults filled.
func (r Registry) Pods(name string) (*podprofile.Profile, error) {
	d, err := r.Lookup(name)
	if err != nil || d.Pods == nil {
		return nil, fmt.Errorf("--target-profile %q: no pod profile of that name (built in: %s; or --pods-profile FILE)", name, strings.Join(r.PodNames(), ", "))
	}
	p := *d.Pods
	p.Name, p.Target = d.Name, d.Name
	if err := p.Check(r.Names()); err != nil {
		return nil, fmt.Errorf("service %s: %w", d.Name, err)
	}
	return &p, nil
}

// ReadPods reads the pod profile file at path, whose target must name one of the registry's services.
func (r Registry) ReadPods(path string) (*podprofile.Profile, error) {
	return podprofile.Read(path, r.Names())
}

// target is the service's target profile, named after it.
func (d *Def) target() *target.Service {
	t := d.Target
	t.Name = d.Name
	return &t
}
