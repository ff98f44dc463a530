# bench-verify.awk reads the stats lines of make bench's verifier runs: pairs of a decode-only run
# (the floor) and a verify run of the same ledger, one right after the other. It prints each pair's
# ratios and then the median of the wall-time ratios, the figure the goal is about: the two runs of a
# pair meet the machine at nearly the same speed, and the median leaves out a pair in which they did
# not. Peak RSS is the largest of the verify runs'. Set acked to the ledger's acked mutations.
/^stats:/ {
	delete v
	for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if ($2 == "decode-only") { fs = v["seconds"]; fc = v["cpu_seconds"]; fr = v["records_per_s"]; next }
	if ($2 != "verify" || fs == "") next
	n++
	wall[n] = v["seconds"] / fs; cpu[n] = v["cpu_seconds"] / fc
	if (v["peak_rss_mib"] > rss) rss = v["peak_rss_mib"]
	printf "bench: pair %d: verify/floor time ratio %.2f, CPU ratio %.2f (verify %.0f records/s, floor %.0f records/s)\n", n, wall[n], cpu[n], v["records_per_s"], fr
	fs = ""
}
END {
	if (n == 0) { print "bench: no pair of floor and verify stats" > "/dev/stderr"; exit 1 }
	# insertion sort: n is a handful
	for (i = 2; i <= n; i++) for (j = i; j > 1 && wall[j-1] > wall[j]; j--) { t = wall[j]; wall[j] = wall[j-1]; wall[j-1] = t }
	for (i = 2; i <= n; i++) for (j = i; j > 1 && cpu[j-1] > cpu[j]; j--) { t = cpu[j]; cpu[j] = cpu[j-1]; cpu[j-1] = t }
	mw = n % 2 ? wall[(n+1)/2] : (wall[n/2] + wall[n/2+1]) / 2
	mc = n % 2 ? cpu[(n+1)/2] : (cpu[n/2] + cpu[n/2+1]) / 2
	printf "bench: verify/floor time ratio %.2f (median of %d pairs; goal <= 1.25), CPU ratio %.2f, verify peak RSS %s MiB = %.0f bytes per acked mutation (goal <= 64)\n", mw, n, mc, rss, rss * 1048576 / acked
}
