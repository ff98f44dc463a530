package faults

import (
	"fmt"
	"io"
	"strings"
)

// targetHelp says what a target of a class may be.
func targetHelp(c TargetClass) string {
	if c == TargetMeta {
		return "the meta DB (omit target, or write meta)"
	}
	return fmt.Sprintf("a %s name, %s (one drawn from the seed) or %s", c, TargetRandom, TargetAll)
}

func timingHelp(t Timing) string {
	if t == TimingInstant {
		return "instant: happens at `at`; no `for`"
	}
	return "span: starts at `at`, healed after `for` (required)"
}

func paramLine(d ParamDoc) string {
	s := fmt.Sprintf("%s (%s, default %s", d.Name, d.Type, d.Default)
	if d.Default == "" {
		s = fmt.Sprintf("%s (%s, default empty", d.Name, d.Type)
	}
	if len(d.Enum) > 0 {
		s += "; one of " + strings.Join(d.Enum, ", ")
	}
	return s + ")"
}

// WriteCatalog prints every registered kind with its targets, timing, parameters (type, default,
// allowed values, meaning), what it simulates and how it is made: the text of `seqgate faults`.
func WriteCatalog(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d fault kinds. Timing keys shared by all: at, for, every, repeat (see docs/faults.md).\n", len(Registry))
	for _, k := range Registry {
		fmt.Fprintf(&b, "\n%s\n", k.Name)
		fmt.Fprintf(&b, "  simulates: %s\n", k.Simulates)
		fmt.Fprintf(&b, "  target:    %s\n", targetHelp(k.Targets))
		fmt.Fprintf(&b, "  timing:    %s\n", timingHelp(k.Timing))
		fmt.Fprintf(&b, "  mechanism: %s\n", k.Mechanism)
		if len(k.params) == 0 {
			fmt.Fprintf(&b, "  params:    none\n")
			continue
		}
		fmt.Fprintf(&b, "  params:\n")
		for _, d := range k.params {
			fmt.Fprintf(&b, "    %s\n      %s\n", paramLine(d), d.Help)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCatalogMarkdown prints the same catalog as Markdown (the generated section of docs/faults.md).
func WriteCatalogMarkdown(w io.Writer) error {
	var b strings.Builder
	for _, k := range Registry {
		fmt.Fprintf(&b, "### `%s`\n\n", k.Name)
		fmt.Fprintf(&b, "- **Simulates:** %s\n", k.Simulates)
		fmt.Fprintf(&b, "- **Target:** %s\n", targetHelp(k.Targets))
		fmt.Fprintf(&b, "- **Timing:** %s\n", timingHelp(k.Timing))
		fmt.Fprintf(&b, "- **Mechanism:** %s\n", k.Mechanism)
		if len(k.params) == 0 {
			fmt.Fprintf(&b, "- **Params:** none\n\n")
			continue
		}
		fmt.Fprintf(&b, "- **Params:**\n")
		for _, d := range k.params {
			fmt.Fprintf(&b, "  - `%s`: %s\n", paramLine(d), d.Help)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
