package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The part of Alloy's configuration syntax the bench's config.alloy uses
// (grafana.com/docs/alloy, "Configuration syntax"): blocks `name "label" { ... }`,
// attributes `name = value`, values that are strings, references
// (pyroscope.write.local.receiver), lists `[...]` and objects `{"key" = value, ...}`.
// Enough to run metrics.sh.tftpl's alloy_config as written, not a general reader.

type alloyValue struct {
	str    *string
	ref    string
	list   []alloyValue
	object map[string]alloyValue
}

type alloyBlock struct {
	name, label string
	attrs       map[string]alloyValue
	blocks      []alloyBlock
}

type alloyParser struct {
	src string
	pos int
}

func (p *alloyParser) skip() {
	for p.pos < len(p.src) {
		switch {
		case unicode.IsSpace(rune(p.src[p.pos])):
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *alloyParser) fail(format string, args ...any) error {
	line := strings.Count(p.src[:p.pos], "\n") + 1
	return fmt.Errorf("config.alloy line %d: %s", line, fmt.Sprintf(format, args...))
}

func (p *alloyParser) ident() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] == '_' || p.src[p.pos] == '.' || unicode.IsLetter(rune(p.src[p.pos])) || unicode.IsDigit(rune(p.src[p.pos]))) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *alloyParser) peek() byte {
	p.skip()
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

func (p *alloyParser) expect(c byte) error {
	if p.peek() != c {
		return p.fail("expected %q", c)
	}
	p.pos++
	return nil
}

func (p *alloyParser) str() (string, error) {
	p.skip()
	quoted, err := strconv.QuotedPrefix(p.src[p.pos:])
	if err != nil || !strings.HasPrefix(quoted, `"`) {
		return "", p.fail("expected a string")
	}
	p.pos += len(quoted)
	s, _ := strconv.Unquote(quoted)
	return s, nil
}

func (p *alloyParser) value() (alloyValue, error) {
	switch p.peek() {
	case '"':
		s, err := p.str()
		return alloyValue{str: &s}, err
	case '[':
		p.pos++
		var list []alloyValue
		for p.peek() != ']' {
			v, err := p.value()
			if err != nil {
				return v, err
			}
			list = append(list, v)
			if p.peek() == ',' {
				p.pos++
			} else if p.peek() != ']' {
				return v, p.fail("expected , or ] in a list")
			}
		}
		p.pos++
		return alloyValue{list: list}, nil
	case '{':
		p.pos++
		obj := map[string]alloyValue{}
		for p.peek() != '}' {
			key, err := p.str()
			if err != nil {
				return alloyValue{}, err
			}
			if err := p.expect('='); err != nil {
				return alloyValue{}, err
			}
			v, err := p.value()
			if err != nil {
				return v, err
			}
			obj[key] = v
			if p.peek() == ',' {
				p.pos++
			} else if p.peek() != '}' {
				return v, p.fail("expected , or } in an object")
			}
		}
		p.pos++
		return alloyValue{object: obj}, nil
	default:
		if ref := p.ident(); ref != "" {
			return alloyValue{ref: ref}, nil
		}
		return alloyValue{}, p.fail("expected a value")
	}
}

// body reads attributes and blocks until `end` (0: the end of the file).
func (p *alloyParser) body(end byte) (map[string]alloyValue, []alloyBlock, error) {
	attrs := map[string]alloyValue{}
	var blocks []alloyBlock
	for p.peek() != end {
		name := p.ident()
		if name == "" {
			return nil, nil, p.fail("expected an attribute or a block")
		}
		switch p.peek() {
		case '=':
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, nil, err
			}
			attrs[name] = v
		default:
			b := alloyBlock{name: name}
			if p.peek() == '"' {
				label, err := p.str()
				if err != nil {
					return nil, nil, err
				}
				b.label = label
			}
			if err := p.expect('{'); err != nil {
				return nil, nil, err
			}
			var err error
			if b.attrs, b.blocks, err = p.body('}'); err != nil {
				return nil, nil, err
			}
			p.pos++
			blocks = append(blocks, b)
		}
	}
	return attrs, blocks, nil
}

// scrapeJob is one pyroscope.scrape component, resolved against its pyroscope.write.
type scrapeJob struct {
	job      string
	interval time.Duration
	endpoint string
	targets  []target
}

// parseAlloyConfig reads the components the bench configures, with Alloy's defaults for
// what the file leaves out (scrape.go NewDefaultArguments: scrape_interval 15 s; the job
// label is the component's ID, target.go populateLabels).
func parseAlloyConfig(src string) ([]scrapeJob, error) {
	p := &alloyParser{src: src}
	_, blocks, err := p.body(0)
	if err != nil {
		return nil, err
	}
	writers := map[string]string{}
	for _, b := range blocks {
		if b.name != "pyroscope.write" {
			continue
		}
		for _, e := range b.blocks {
			if u := e.attrs["url"].str; e.name == "endpoint" && u != nil {
				writers["pyroscope.write."+b.label+".receiver"] = *u
			}
		}
	}
	var jobs []scrapeJob
	for _, b := range blocks {
		if b.name != "pyroscope.scrape" {
			continue
		}
		j := scrapeJob{job: "pyroscope.scrape." + b.label, interval: 15 * time.Second}
		if v := b.attrs["scrape_interval"].str; v != nil {
			if j.interval, err = time.ParseDuration(*v); err != nil {
				return nil, fmt.Errorf("%s: scrape_interval: %w", j.job, err)
			}
		}
		forward := b.attrs["forward_to"].list
		if len(forward) != 1 || writers[forward[0].ref] == "" {
			return nil, fmt.Errorf("%s: forward_to must name one pyroscope.write receiver of this file", j.job)
		}
		j.endpoint = writers[forward[0].ref]
		for _, t := range b.attrs["targets"].list {
			tg := target{labels: map[string]string{}}
			for k, v := range t.object {
				if v.str == nil {
					return nil, fmt.Errorf("%s: target label %s is not a string", j.job, k)
				}
				if k == "__address__" {
					tg.address = *v.str
				} else {
					tg.labels[k] = *v.str
				}
			}
			if tg.address == "" {
				return nil, fmt.Errorf("%s: a target without __address__", j.job)
			}
			j.targets = append(j.targets, tg)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("config.alloy has no pyroscope.scrape component")
	}
	return jobs, nil
}
