// Command eventlogd is the reference event log (one process = one pod); see docs/eventlogd.md.
package main

func main() {}
