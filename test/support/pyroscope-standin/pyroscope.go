package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/google/pprof/profile"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	pushv1 "github.com/grafana/pyroscope/api/gen/proto/go/push/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/push/v1/pushv1connect"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
	"google.golang.org/protobuf/proto"
)

// One ingested profile of one profile type, as Pyroscope keeps it: the series' labels, its
// time and its samples of that type alone.
type stored struct {
	labels    map[string]string
	typeID    string
	timeNanos int64
	prof      *profile.Profile
}

type store struct {
	mu       sync.Mutex
	profiles []stored
}

var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// Push follows the distributor (pkg/distributor/distributor.go Push, pkg/validation
// ValidateLabels and ValidateProfile) and the ingester's split of a pprof profile into one
// series per sample type, whose profile type ID is
// __name__:sample_type:sample_unit:period_type:period_unit (pkg/model profile types):
//   - a series without service_name gets service_name="unspecified";
//   - its labels must hold a valid metric name in __name__;
//   - a profile whose time_nanos is 0 is stamped with the time it arrived; otherwise it
//     keeps its own (runtime/pprof writes the time the CPU profile started).
func (s *store) Push(_ context.Context, req *connect.Request[pushv1.PushRequest]) (*connect.Response[pushv1.PushResponse], error) {
	var add []stored
	for _, series := range req.Msg.Series {
		labels := map[string]string{}
		for _, l := range series.Labels {
			labels[l.Name] = l.Value
		}
		if labels["service_name"] == "" {
			labels["service_name"] = "unspecified"
		}
		if !metricName.MatchString(labels["__name__"]) {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("invalid labels '%v' with error: invalid metric name", labels))
		}
		for _, sample := range series.Samples {
			p, err := profile.ParseData(sample.RawProfile)
			if err != nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("failed to parse profile: %w", err))
			}
			if p.TimeNanos == 0 {
				p.TimeNanos = time.Now().UnixNano()
			}
			if p.PeriodType == nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("profile has no period type"))
			}
			for i, st := range p.SampleType {
				one := p.Copy()
				one.SampleType = []*profile.ValueType{st}
				one.DefaultSampleType = ""
				for _, smp := range one.Sample {
					smp.Value = []int64{smp.Value[i]}
				}
				typeID := strings.Join([]string{labels["__name__"], st.Type, st.Unit, p.PeriodType.Type, p.PeriodType.Unit}, ":")
				add = append(add, stored{labels: labels, typeID: typeID, timeNanos: p.TimeNanos, prof: one})
			}
		}
	}
	s.mu.Lock()
	s.profiles = append(s.profiles, add...)
	s.mu.Unlock()
	return connect.NewResponse(&pushv1.PushResponse{}), nil
}

// select returns the profiles of a type whose labels match and whose time is in
// [startMs, endMs], both ends included (pkg/phlaredb/block_querier.go SelectMatchingProfiles:
// an IntBetweenPredicate on TimeNanos).
func (s *store) selectProfiles(typeID, selector string, startMs, endMs int64) ([]stored, error) {
	if _, err := parseProfileType(typeID); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	ms, err := parseSelector(selector)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []stored
	for _, p := range s.profiles {
		if p.typeID == typeID && p.timeNanos >= startMs*1e6 && p.timeNanos <= endMs*1e6 && matchesAll(ms, p.labels) {
			out = append(out, p)
		}
	}
	return out, nil
}

// parseProfileType follows pkg/model ParseProfileTypeSelector: five parts split by ':'.
func parseProfileType(id string) ([]string, error) {
	parts := strings.Split(id, ":")
	if len(parts) != 5 {
		return nil, fmt.Errorf("profile-type selection must be of the form <name>:<sample-type>:<sample-unit>:<period-type>:<period-unit>(:delta), got(%d): %q", len(parts), id)
	}
	return parts, nil
}

// SelectMergeProfile merges the matching profiles into one pprof profile as the querier
// does (pkg/querier/querier.go SelectMergeProfile, pkg/pprof SetProfileMetadata): its one
// sample type is the requested one, its period type too, its period 1 s for process_cpu
// (Pyroscope does not keep the sampling period), time_nanos the end of the range and
// duration_nanos the whole range, whatever the profiles covered. No node limit applies
// unless max_nodes is set (pkg/frontend/frontend_select_merge_profile.go).
func (s *store) SelectMergeProfile(_ context.Context, req *connect.Request[querierv1.SelectMergeProfileRequest]) (*connect.Response[googlev1.Profile], error) {
	if req.Msg.Start > req.Msg.End {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("start must be before end"))
	}
	found, err := s.selectProfiles(req.Msg.ProfileTypeID, req.Msg.LabelSelector, req.Msg.Start, req.Msg.End)
	if err != nil {
		return nil, err
	}
	parts, _ := parseProfileType(req.Msg.ProfileTypeID)
	var merged *profile.Profile
	if len(found) > 0 {
		list := make([]*profile.Profile, len(found))
		for i, f := range found {
			list[i] = f.prof.Copy()
			list[i].Period = 0
			list[i].TimeNanos = 0
			list[i].DurationNanos = 0
		}
		if merged, err = profile.Merge(list); err != nil {
			return nil, connect.NewError(connect.CodeInternal, err)
		}
	} else {
		merged = &profile.Profile{}
	}
	merged.SampleType = []*profile.ValueType{{Type: parts[1], Unit: parts[2]}}
	merged.PeriodType = &profile.ValueType{Type: parts[3], Unit: parts[4]}
	merged.DefaultSampleType = parts[1]
	switch parts[0] {
	case "process_cpu":
		merged.Period = 1_000_000_000
	case "memory":
		merged.Period = 512 * 1024
	default:
		merged.Period = 1
	}
	merged.TimeNanos = req.Msg.End * 1e6
	merged.DurationNanos = (req.Msg.End - req.Msg.Start) * 1e6
	out, err := toProto(merged)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(out), nil
}

func toProto(p *profile.Profile) (*googlev1.Profile, error) {
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		return nil, err
	}
	out := &googlev1.Profile{}
	return out, proto.Unmarshal(buf.Bytes(), out)
}

// SelectSeries sums each matching profile's values into points step seconds apart, one
// series per value of the group_by labels (pkg/querier/querier.go SelectSeries, which reads
// the profiles from start - step to end, and pkg/model RangeSeries: a profile counts in the
// first step at or after its time; only steps with profiles have points).
func (s *store) SelectSeries(_ context.Context, req *connect.Request[querierv1.SelectSeriesRequest]) (*connect.Response[querierv1.SelectSeriesResponse], error) {
	if req.Msg.Start > req.Msg.End {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("start must be before end"))
	}
	if req.Msg.Step == 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("step must be non-zero"))
	}
	stepMs := time.Duration(req.Msg.Step * float64(time.Second)).Milliseconds()
	found, err := s.selectProfiles(req.Msg.ProfileTypeID, req.Msg.LabelSelector, req.Msg.Start-stepMs, req.Msg.End)
	if err != nil {
		return nil, err
	}
	groupBy := append([]string(nil), req.Msg.GroupBy...)
	sort.Strings(groupBy)
	type key = string
	series := map[key]*typesv1.Series{}
	points := map[key]map[int64]float64{}
	for _, f := range found {
		var labels []*typesv1.LabelPair
		for _, name := range groupBy {
			if v, ok := f.labels[name]; ok {
				labels = append(labels, &typesv1.LabelPair{Name: name, Value: v})
			}
		}
		k := fmt.Sprint(labels)
		if series[k] == nil {
			series[k] = &typesv1.Series{Labels: labels}
			points[k] = map[int64]float64{}
		}
		tsMs := f.timeNanos / 1e6
		at := req.Msg.Start
		if tsMs > at {
			at += ((tsMs - at + stepMs - 1) / stepMs) * stepMs
		}
		var total int64
		for _, smp := range f.prof.Sample {
			total += smp.Value[0]
		}
		points[k][at] += float64(total)
	}
	out := &querierv1.SelectSeriesResponse{}
	for k, sr := range series {
		for at, v := range points[k] {
			sr.Points = append(sr.Points, &typesv1.Point{Timestamp: at, Value: v})
		}
		sort.Slice(sr.Points, func(i, j int) bool { return sr.Points[i].Timestamp < sr.Points[j].Timestamp })
		out.Series = append(out.Series, sr)
	}
	sort.Slice(out.Series, func(i, j int) bool { return fmt.Sprint(out.Series[i].Labels) < fmt.Sprint(out.Series[j].Labels) })
	return connect.NewResponse(out), nil
}

// The querier answers the two methods the gate uses; the others answer Unimplemented.
type querier struct {
	querierv1connect.UnimplementedQuerierServiceHandler
	store *store
}

func (q querier) SelectMergeProfile(ctx context.Context, req *connect.Request[querierv1.SelectMergeProfileRequest]) (*connect.Response[googlev1.Profile], error) {
	return q.store.SelectMergeProfile(ctx, req)
}

func (q querier) SelectSeries(ctx context.Context, req *connect.Request[querierv1.SelectSeriesRequest]) (*connect.Response[querierv1.SelectSeriesResponse], error) {
	return q.store.SelectSeries(ctx, req)
}

func runPyroscope(args []string) error {
	fs := flag.NewFlagSet("pyroscope", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := &store{}
	mux := http.NewServeMux()
	mux.Handle(pushv1connect.NewPusherServiceHandler(s))
	mux.Handle(querierv1connect.NewQuerierServiceHandler(querier{store: s}))
	// Pyroscope answers its readiness probe here (pkg/api: /ready).
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ready\n") })
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	return http.Serve(ln, mux)
}
