package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docPages are the README and every page of docs/, README first: the
// order in which TestREADMEExamples runs their examples.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return append([]string{"../../README.md"}, pages...)
}

// mdLink is an inline markdown link or image: [text](target "title").
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// codeSpan is inline code, whose brackets are not links.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// mdText is a page's lines outside fenced code blocks, each with its
// line number.
func mdText(t *testing.T, path string) (lines []string, nums []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fenced := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines, nums = append(lines, line), append(nums, i+1)
		}
	}
	return lines, nums
}

// anchors are the ids GitHub gives a page's headings: lower case, spaces
// as hyphens, punctuation dropped, a repeated heading numbered -1, -2, ….
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	lines, _ := mdText(t, path)
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range lines {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		title = mdLink.ReplaceAllStringFunc(title, func(l string) string { return l[strings.Index(l, "[")+1 : strings.Index(l, "]")] })
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				slug.WriteRune(r)
			}
		}
		id := slug.String()
		if n := seen[id]; n > 0 {
			out[id+"-"+strconv.Itoa(n)] = true
		} else {
			out[id] = true
		}
		seen[id]++
	}
	return out
}

// Every relative link of the README and docs/ names a file that exists,
// and every #anchor a heading of its page; docs/README.md links every page.
func TestDocsLinks(t *testing.T) {
	pages := docPages(t)
	if len(pages) < 9 {
		t.Fatalf("found %d pages; want the README and the docs/ pages", len(pages))
	}
	checked := 0
	for _, page := range pages {
		lines, nums := mdText(t, page)
		for i, line := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "code"), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: %v", shortPath(page), nums[i], target, err)
					continue
				}
				if frag != "" && !anchors(t, dest)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", shortPath(page), nums[i], target, shortPath(dest), frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d links; the link reader is broken", checked)
	}
	index, err := os.ReadFile("../../docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages[1:] {
		name := filepath.Base(page)
		if name != "README.md" && !strings.Contains(string(index), "("+name) {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}

// shortPath is a page's path from the repository's root.
func shortPath(p string) string { return strings.TrimPrefix(filepath.ToSlash(p), "../../") }

// The marked examples are found in the README and in docs/, indented ones
// (inside a list item) included, and read without their indentation.
func TestDocExamplesAreRead(t *testing.T) {
	files := map[string]int{}
	for _, ex := range readmeExamples(t) {
		files[ex.file]++
	}
	for _, f := range []string{"README.md", "docs/api.md", "docs/sandboxes.md"} {
		if files[f] == 0 {
			t.Errorf("no marked example read from %s (read: %v)", f, files)
		}
	}
	page := filepath.Join(t.TempDir(), "page.md")
	text := "1. Step:\n\n   <!-- example -->\n   ```sh\n   echo hi   # → hi\n   ```\n\n```sh\nnot marked\n```\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	exs := pageExamples(t, page)
	if len(exs) != 1 || exs[0].code != "echo hi   # → hi\n" || exs[0].line != 4 {
		t.Errorf("read %+v; want one example at line 4, \"echo hi   # → hi\\n\"", exs)
	}
}

// helpFlag is a flag's line in the usage output ("  -addr string").
var helpFlag = regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`)

// helpEnv is an environment variable a flag's usage names.
var helpEnv = regexp.MustCompile(`\(env (BULLPEN_[A-Z0-9_]+)\)`)

// docFlag is a flag in a row of the configuration tables.
var docFlag = regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)`")

// Every flag of `bullpen serve`, and every variable its usage names, is in
// the configuration tables of docs/operations.md, and every flag those
// tables list exists.
func TestFlagsAreDocumented(t *testing.T) {
	usage := serveUsage(t)
	flags := helpFlag.FindAllStringSubmatch(usage, -1)
	if len(flags) < 15 {
		t.Fatalf("found %d flags in the usage of bullpen serve; the reader is broken:\n%s", len(flags), usage)
	}
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	real := map[string]bool{}
	for _, f := range flags {
		real[f[1]] = true
		if !strings.Contains(doc, "`--"+f[1]+"`") {
			t.Errorf("flag --%s of bullpen serve is not in docs/operations.md", f[1])
		}
	}
	for _, e := range helpEnv.FindAllStringSubmatch(usage, -1) {
		if !strings.Contains(doc, "`"+e[1]+"`") {
			t.Errorf("variable %s of bullpen serve is not in docs/operations.md", e[1])
		}
	}
	for _, f := range docFlag.FindAllStringSubmatch(doc, -1) {
		if !real[f[1]] {
			t.Errorf("docs/operations.md lists --%s, which bullpen serve does not have", f[1])
		}
	}
}

// serveUsage is what `bullpen serve -h` prints.
func serveUsage(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "usage")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stderr := os.Stderr
	os.Stderr = f // the flag set prints its usage to os.Stderr
	err = NewMain(io.Discard, io.Discard).ParseFlags("serve", []string{"-h"})
	os.Stderr = stderr
	if err == nil {
		t.Fatal("serve -h: no error; want flag.ErrHelp")
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// issueNumber is a reference to the project's issue tracker.
var issueNumber = regexp.MustCompile(`(?i)\bissues? #?\d+`)

// The README stays a front door: at most 200 lines, the two commands in
// its first screen, and no issue numbers in it or in docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it at most 200 and move the rest into docs/", len(lines))
	}
	head := strings.Join(lines[:min(len(lines), 20)], "\n")
	for _, cmd := range []string{"\nmake run ", "\nmake test "} {
		if !strings.Contains(head, cmd) {
			t.Errorf("the first 20 lines of README.md lack %q", strings.TrimSpace(cmd))
		}
	}
	for _, page := range docPages(t) {
		text, nums := mdText(t, page)
		for i, line := range text {
			if m := issueNumber.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: say what changed, not its issue number", shortPath(page), nums[i], m)
			}
		}
	}
}
