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

type resolveList map[string]string

func (r resolveList) String() string { return fmt.Sprint(map[string]string(r)) }

// Set reads "HOST:PORT=127.0.0.1:PORT": where a name of the bench (app0:8067) is on loopback.
func (r resolveList) Set(s string) error {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" || to == "" {
		return fmt.Errorf("bad -resolve %q (HOST:PORT=ADDRESS:PORT)", s)
	}
	r[from] = to
	return nil
}

// runAlloy runs the pyroscope.scrape components of a config.alloy (the one
// metrics.sh.tftpl's alloy_config writes). -resolve stands for the node's /etc/hosts and
// network; -scrape-interval, when set, replaces the file's (loopback tests run seconds).
func runAlloy(args []string) error {
	fs := flag.NewFlagSet("alloy", flag.ContinueOnError)
	configFile := fs.String("config", "", "config.alloy")
	interval := fs.Duration("scrape-interval", 0, "replaces every component's scrape_interval")
	timeout := fs.Duration("timeout", 10*time.Second, "scrape_timeout")
	resolve := resolveList{}
	fs.Var(resolve, "resolve", "HOST:PORT=ADDRESS:PORT (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	src, err := os.ReadFile(*configFile)
	if err != nil {
		return err
	}
	jobs, err := parseAlloyConfig(string(src))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var loops []func()
	for _, j := range jobs {
		if *interval > 0 {
			j.interval = *interval
		}
		// scrape.go Validate: a delta profile needs scrape_interval of 2 s or more.
		if j.interval < 2*time.Second {
			return fmt.Errorf("%s: scrape_interval must be at least 2 seconds when using delta profiling", j.job)
		}
		endpoint := j.endpoint
		for from, to := range resolve {
			endpoint = strings.Replace(endpoint, "//"+from, "//"+to, 1)
		}
		client := pushv1connect.NewPusherServiceClient(http.DefaultClient, endpoint)
		for _, t := range j.targets {
			scraped := t.address
			if to, ok := resolve[scraped]; ok {
				scraped = to
			}
			labels := map[string]string{"instance": t.address}
			for k, v := range t.labels {
				labels[k] = v
			}
			job, every := j.job, j.interval
			loops = append(loops, func() { scrapeLoop(ctx, client, scraped, labels, job, every, *timeout) })
		}
	}
	fmt.Println("scraping")
	done := make(chan struct{})
	for _, loop := range loops {
		go func() {
			loop()
			done <- struct{}{}
		}()
	}
	for range loops {
		<-done
	}
	return nil
}

func scrapeLoop(ctx context.Context, client pushv1connect.PusherServiceClient, address string, targetLabels map[string]string, job string, interval, timeout time.Duration) {
	labels := map[string]string{"__name__": "process_cpu", "job": job, "service_name": "unspecified"}
	for k, v := range targetLabels {
		labels[k] = v
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", address, int(interval/time.Second)-1)
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
