// A stand-in for a Mattermost server's Go process, for the profile path: its metrics
// listener as Mattermost builds it (server/channels/app/platform/metrics.go
// startMetricsServer and initMetricsRouter): Go's own net/http/pprof handlers on an
// http.Server whose ReadTimeout and WriteTimeout are ServiceSettings' (the bench sets
// both to 60 s, src/chat-servers/mattermost/config-patch.ts benchNodeDefaults). So the
// rules a profiler meets are Go's own: runtime/pprof.StartCPUProfile allows one CPU
// profile at a time per process, and net/http/pprof's Profile answers a second one 500
// "Could not enable CPU profiling: cpu profiling already in use".
//
// How Profile treats the WriteTimeout depends on the Go that built the release: up to Go
// 1.22, net/http/pprof refused a duration at or above the server's WriteTimeout (400
// "profile duration exceeds server's WriteTimeout", durationExceedsWriteTimeout); from Go
// 1.23 it extends the connection's write deadline by the duration instead
// (configureWriteDeadline, golang/go commit a557f9dc). This binary is built by today's Go,
// so -pprof-go122 puts the older rule, as Go 1.22 wrote it, in front of the handler.
//
// Beside it, an app listener runs a few Mattermost-like API handlers that spend CPU in
// named functions (api.go, post.go), so a profile of the process under load has the shape
// of a server's. Built with -tags knowncause, one of them (sanitizeMessage) does more
// work: a candidate with a known cause.
//
// It prints "metrics=ADDRESS app=ADDRESS" on its first line of stdout.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"
)

// go122Profile is net/http/pprof.Profile behind Go 1.22's check (src/net/http/pprof/pprof.go
// Profile and durationExceedsWriteTimeout): seconds defaults to 30, and a duration not
// below the server's WriteTimeout is refused before profiling starts.
func go122Profile(w http.ResponseWriter, r *http.Request) {
	sec, err := strconv.ParseInt(r.FormValue("seconds"), 10, 64)
	if sec <= 0 || err != nil {
		sec = 30
	}
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	if ok && srv.WriteTimeout != 0 && float64(sec) >= srv.WriteTimeout.Seconds() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Go-Pprof", "1")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "profile duration exceeds server's WriteTimeout")
		return
	}
	pprof.Profile(w, r)
}

func main() {
	metricsAddr := flag.String("metrics", "127.0.0.1:0", "metrics listener (MetricsSettings.ListenAddress)")
	appAddr := flag.String("app", "127.0.0.1:0", "API listener")
	readTimeout := flag.Duration("read-timeout", 60*time.Second, "ServiceSettings.ReadTimeout")
	writeTimeout := flag.Duration("write-timeout", 60*time.Second, "ServiceSettings.WriteTimeout")
	go122 := flag.Bool("pprof-go122", false, "net/http/pprof as Go 1.22 and earlier: refuse a profile not shorter than the WriteTimeout")
	flag.Parse()

	metrics := http.NewServeMux()
	metrics.HandleFunc("/debug/pprof/", pprof.Index)
	metrics.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	if *go122 {
		metrics.HandleFunc("/debug/pprof/profile", go122Profile)
	} else {
		metrics.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	metrics.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	metrics.HandleFunc("/debug/pprof/trace", pprof.Trace)
	metrics.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	metrics.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	metrics.Handle("/debug/pprof/block", pprof.Handler("block"))

	ml, err := net.Listen("tcp", *metricsAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	al, err := net.Listen("tcp", *appAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("metrics=%s app=%s\n", ml.Addr(), al.Addr())
	go func() {
		srv := &http.Server{Handler: metrics, ReadTimeout: *readTimeout, WriteTimeout: *writeTimeout}
		if err := srv.Serve(ml); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()
	app := &http.Server{Handler: newAPI(), ReadTimeout: *readTimeout, WriteTimeout: *writeTimeout}
	if err := app.Serve(al); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
