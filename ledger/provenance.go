package ledger

// Provenance is what a run judged, on its run record (seqgate's addition, field "provenance"):
// the build of seqgate, the pods' binary and flags, the overrides of the command line, the scenario
// file's hash and the machine. Nil in ledgers that predate it or that another tool wrote.
type Provenance struct {
	// Seqgate is the build of the seqgate that ran (runtime/debug.ReadBuildInfo).
	Seqgate Build `json:"seqgate"`
	// Pods is the binary the run started its pods from (nil: a run against an external target).
	Pods *Binary `json:"pods"`
	// PodFlags are the flags the scenario gives every pod, as "--name=value" in name order (the
	// harness's own flags, such as --listen and --meta-dsn, are not listed); Defects the seeded
	// defects switched on (empty on a clean build).
	PodFlags []string `json:"pod_flags"`
	Defects  []string `json:"defects"`
	// Sets are the --set overrides in the order given (--seed and --duration as seed=N and
	// duration=D); Args is seqgate's command line after the program name, with secrets (an API key,
	// a DSN's password) replaced by "REDACTED".
	Sets []string `json:"sets"`
	Args []string `json:"args"`
	// ScenarioFile and ScenarioSHA256 are the scenario file as given and the sha256 of its bytes.
	ScenarioFile   string `json:"scenario_file"`
	ScenarioSHA256 string `json:"scenario_sha256"`
	// Machine is where the run ran, as it was when the run record was written.
	Machine Machine `json:"machine"`
}

// Build is one Go program's build: its main module's version, the VCS revision and time it was
// built from, whether the work tree had changes (modified), and the Go version.
type Build struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// Binary is an executable: its path, the sha256 of its bytes, what its --version printed (eventlogd;
// empty when it has no such flag) and its Go build info (nil when it is not a Go binary).
type Binary struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Version string `json:"version"`
	Build   *Build `json:"build"`
}

// Machine is the host a run ran on: its logical CPUs, OS and architecture, and the 1, 5 and 15 minute
// load averages (/proc/loadavg; empty where the system has none). The end record's load_avg gives them
// at the end of the run.
type Machine struct {
	Cores   int       `json:"cores"`
	OS      string    `json:"os"`
	Arch    string    `json:"arch"`
	LoadAvg []float64 `json:"load_avg"`
}

// Clone is a deep copy of p (nil for nil): a record the Reader lends is reused for the next line.
func (p *Provenance) Clone() *Provenance {
	if p == nil {
		return nil
	}
	c := *p
	if p.Pods != nil {
		b := *p.Pods
		if b.Build != nil {
			bb := *b.Build
			b.Build = &bb
		}
		c.Pods = &b
	}
	c.PodFlags = cloneStrings(p.PodFlags)
	c.Defects = cloneStrings(p.Defects)
	c.Sets = cloneStrings(p.Sets)
	c.Args = cloneStrings(p.Args)
	if p.Machine.LoadAvg != nil {
		c.Machine.LoadAvg = append([]float64{}, p.Machine.LoadAvg...)
	}
	return &c
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}
