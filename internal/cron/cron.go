// Package cron parses five-field cron expressions (minute hour
// day-of-month month day-of-week) and finds their next time in a time
// zone. Fields take *, numbers, ranges (a-b), lists (a,b) and steps
// (*/n, a-b/n); day-of-week 0 and 7 are Sunday. As in classic cron, when
// both day fields are restricted a day matches either.
package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed expression.
type Schedule struct {
	min, hour, dom, month, dow uint64 // bit i set: value i matches
	domAny, dowAny             bool
}

type field struct {
	name     string
	min, max int
}

var fields = []field{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 31}, {"month", 1, 12}, {"day of week", 0, 7}}

// Parse reads an expression; its error says which field is wrong.
func Parse(expr string) (Schedule, error) {
	parts := strings.Fields(expr)
	if len(parts) != 5 {
		return Schedule{}, fmt.Errorf("cron: %q has %d fields, want 5 (minute hour day-of-month month day-of-week)", expr, len(parts))
	}
	var bits [5]uint64
	for i, p := range parts {
		b, err := parseField(p, fields[i])
		if err != nil {
			return Schedule{}, err
		}
		bits[i] = b
	}
	if bits[4]&(1<<7) != 0 {
		bits[4] |= 1 // 7 is Sunday too
	}
	return Schedule{min: bits[0], hour: bits[1], dom: bits[2], month: bits[3], dow: bits[4],
		domAny: parts[2] == "*", dowAny: parts[4] == "*"}, nil
}

func parseField(s string, f field) (uint64, error) {
	var out uint64
	for _, item := range strings.Split(s, ",") {
		rng, stepStr, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("cron: %s: step %q is not a positive number", f.name, stepStr)
			}
			step = n
		}
		lo, hi := f.min, f.max
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = num(a, f); err != nil {
				return 0, err
			}
			hi = lo
			if isRange {
				if hi, err = num(b, f); err != nil {
					return 0, err
				}
			} else if hasStep {
				hi = f.max
			}
			if hi < lo {
				return 0, fmt.Errorf("cron: %s: range %q runs backwards", f.name, rng)
			}
		}
		for v := lo; v <= hi; v += step {
			out |= 1 << uint(v)
		}
	}
	return out, nil
}

func num(s string, f field) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < f.min || n > f.max {
		return 0, fmt.Errorf("cron: %s: %q is not a number from %d to %d", f.name, s, f.min, f.max)
	}
	return n, nil
}

// Next returns the first time strictly after t, in loc, that matches;
// ok is false when none comes within five years (31 February).
func (s Schedule) Next(t time.Time, loc *time.Location) (next time.Time, ok bool) {
	t = t.In(loc).Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
		case s.min&(1<<uint(t.Minute())) == 0:
			t = t.Add(time.Minute)
		default:
			return t, true
		}
	}
	return time.Time{}, false
}

func (s Schedule) dayMatches(t time.Time) bool {
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	switch {
	case s.domAny && s.dowAny:
		return true
	case s.domAny:
		return dow
	case s.dowAny:
		return dom
	}
	return dom || dow
}
