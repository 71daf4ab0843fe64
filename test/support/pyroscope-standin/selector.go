package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A label matcher of a selector such as {service_name="mattermost", instance=~"app.*"}.
// Pyroscope's querier parses label_selector with Prometheus' parser.ParseMetricSelector
// (pkg/querier/querier.go), answering InvalidArgument when it fails; this reads the braces
// form the gate sends, with Prometheus' rules: the four operators, Go-quoted values,
// regular expressions anchored at both ends (model/labels/regexp.go NewFastRegexMatcher),
// and at least one matcher that does not match the empty string (promql/parser/parse.go
// "vector selector must contain at least one non-empty matcher").
type matcher struct {
	name, op, value string
	re              *regexp.Regexp
}

func (m matcher) matches(v string) bool {
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	case "=~":
		return m.re.MatchString(v)
	default: // "!~"
		return !m.re.MatchString(v)
	}
}

func parseSelector(s string) ([]matcher, error) {
	rest := strings.TrimSpace(s)
	if !strings.HasPrefix(rest, "{") || !strings.HasSuffix(rest, "}") {
		return nil, fmt.Errorf("1:1: parse error: unexpected %q in label selector, expected \"{\"", s)
	}
	rest = strings.TrimSpace(rest[1 : len(rest)-1])
	var out []matcher
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) })
		if i <= 0 {
			return nil, fmt.Errorf("parse error: expected a label name in %q", s)
		}
		name := rest[:i]
		rest = strings.TrimSpace(rest[i:])
		op := ""
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("parse error: expected a label matching operator after %q", name)
		}
		rest = strings.TrimSpace(rest[len(op):])
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, fmt.Errorf("parse error: expected a quoted label value for %q: %v", name, err)
		}
		value, _ := strconv.Unquote(quoted)
		rest = strings.TrimSpace(rest[len(quoted):])
		m := matcher{name: name, op: op, value: value}
		if op == "=~" || op == "!~" {
			if m.re, err = regexp.Compile("^(?:" + value + ")$"); err != nil {
				return nil, fmt.Errorf("parse error: invalid regular expression for %q: %v", name, err)
			}
		}
		out = append(out, m)
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimSpace(rest[1:])
		} else if rest != "" {
			return nil, fmt.Errorf("parse error: unexpected %q in label selector", rest)
		}
	}
	for _, m := range out {
		if !m.matches("") {
			return out, nil
		}
	}
	return nil, fmt.Errorf("parse error: vector selector must contain at least one non-empty matcher")
}

func matchesAll(ms []matcher, labels map[string]string) bool {
	for _, m := range ms {
		if !m.matches(labels[m.name]) {
			return false
		}
	}
	return true
}
