package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"
	pushv1 "github.com/grafana/pyroscope/api/gen/proto/go/push/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/push/v1/pushv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
)

// What Alloy's pyroscope.scrape and pyroscope.write do with one process_cpu target
// (grafana/alloy v1.8.1, internal/component/pyroscope):
//   - scrape/target.go targetsFromGroup: a delta profile type (process_cpu is one, at
//     /debug/pprof/profile) is asked for ?seconds=<scrape_interval in seconds - 1>;
//   - scrape/target.go populateLabels: job defaults to the component's ID
//     ("pyroscope.scrape.<label>"), instance to the address, service_name to
//     "unspecified"; labelsByProfiles sets __name__ to the profile type;
//   - scrape/scrape_loop.go: each target scrapes every scrape_interval after an offset
//     from its hash; the request times out after scrape_timeout + scrape_interval - 1 s;
//     a non-2xx answer or an empty body is logged ("fetch profile failed") and nothing is
//     written for that interval;
//   - write/write.go Append: labels starting with "__" are dropped except __name__ and
//     __delta__, and the raw profile goes to PusherService/Push unchanged.
//
// Only process_cpu is scraped here: the other default profile types (memory, goroutine,
// block, mutex) do not use the process's one CPU profiler.
type target struct {
	address string
	labels  map[string]string
}

type targetList []target

func (t *targetList) String() string { return fmt.Sprint(*t) }

// Set reads "ADDRESS|name=value|name=value".
func (t *targetList) Set(s string) error {
	parts := strings.Split(s, "|")
	tg := target{address: parts[0], labels: map[string]string{}}
	for _, kv := range parts[1:] {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return fmt.Errorf("bad label %q in target %q", kv, s)
		}
		tg.labels[name] = value
	}
	*t = append(*t, tg)
	return nil
}

func runAlloy(args []string) error {
	fs := flag.NewFlagSet("alloy", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "pyroscope.write endpoint url")
	interval := fs.Duration("interval", 15*time.Second, "scrape_interval")
	timeout := fs.Duration("timeout", 10*time.Second, "scrape_timeout")
	job := fs.String("job", "pyroscope.scrape.default", "the component's ID, the job label")
	var targets targetList
	fs.Var(&targets, "target", "ADDRESS|name=value|... (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *endpoint == "" || len(targets) == 0 {
		return fmt.Errorf("alloy: -endpoint and at least one -target are required")
	}
	// scrape.go Validate: a delta profile needs scrape_interval of 2 s or more.
	if *interval < 2*time.Second {
		return fmt.Errorf("scrape_interval must be at least 2 seconds when using delta profiling")
	}
	client := pushv1connect.NewPusherServiceClient(http.DefaultClient, *endpoint)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Println("scraping")
	done := make(chan struct{})
	for _, t := range targets {
		go func(t target) {
			scrapeLoop(ctx, client, t, *job, *interval, *timeout)
			done <- struct{}{}
		}(t)
	}
	for range targets {
		<-done
	}
	return nil
}

func scrapeLoop(ctx context.Context, client pushv1connect.PusherServiceClient, t target, job string, interval, timeout time.Duration) {
	labels := map[string]string{"__name__": "process_cpu", "job": job, "instance": t.address, "service_name": "unspecified"}
	for k, v := range t.labels {
		labels[k] = v
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", t.address, int(interval/time.Second)-1)
	h := fnv.New64a()
	_, _ = io.WriteString(h, url)
	select {
	case <-time.After(time.Duration(h.Sum64() % uint64(interval))):
	case <-ctx.Done():
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if err := scrapeOnce(ctx, client, url, labels, timeout+interval-time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "level=error msg=\"fetch profile failed\" target=%s err=%q\n", url, err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func scrapeOnce(ctx context.Context, client pushv1connect.PusherServiceClient, url string, labels map[string]string, timeout time.Duration) error {
	scrapeCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(scrapeCtx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("failed to read body: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("server returned HTTP status (%d) %s", resp.StatusCode, string(bytes.TrimSpace(b)))
	}
	if len(b) == 0 {
		return fmt.Errorf("empty process_cpu profile from %s", url)
	}
	names := make([]string, 0, len(labels))
	for name := range labels {
		if !strings.HasPrefix(name, "__") || name == "__name__" || name == "__delta__" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	series := &pushv1.RawProfileSeries{Samples: []*pushv1.RawSample{{RawProfile: b}}}
	for _, name := range names {
		series.Labels = append(series.Labels, &typesv1.LabelPair{Name: name, Value: labels[name]})
	}
	_, err = client.Push(ctx, connect.NewRequest(&pushv1.PushRequest{Series: []*pushv1.RawProfileSeries{series}}))
	if err != nil {
		return fmt.Errorf("push failed: %w", err)
	}
	return nil
}
