// Stand-ins for the two profiling components of the AWS bench's metrics node, which
// cannot run here (the Go module proxy refuses github.com/grafana/pyroscope and
// github.com/grafana/alloy, and no other registry carries them):
//
//	pyroscope-standin pyroscope -listen 127.0.0.1:0
//	pyroscope-standin alloy -config config.alloy [-resolve app0:8067=127.0.0.1:PORT ...] [-scrape-interval 2s]
//
// `pyroscope` speaks Grafana Pyroscope 1.13's own API through the generated Connect code of
// github.com/grafana/pyroscope/api v1.0.0 (whose push, querier, types and google protos are
// those of the 1.13.0 server): PusherService/Push to ingest, QuerierService's
// SelectMergeProfile and SelectSeries to read. `alloy` runs the pyroscope.scrape and
// pyroscope.write components of the bench's config.alloy (alloy_config.go reads it): it
// scrapes Go pprof endpoints the way Alloy does and writes them the way Alloy does. Each prints
// its address (pyroscope) or "scraping" (alloy) on its first line of stdout.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pyroscope-standin pyroscope|alloy [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pyroscope":
		err = runPyroscope(os.Args[2:])
	case "alloy":
		err = runAlloy(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (pyroscope or alloy)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
