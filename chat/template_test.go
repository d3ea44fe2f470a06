package chat

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRaiseException(t *testing.T) {
	tmpl, err := Compile(`{% if messages[0].role != 'user' %}{{ raise_exception('first turn must be the user\'s') }}{% endif %}ok`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tmpl.Render([]Message{{Role: "user", Content: "x"}}, Options{}); err != nil || got != "ok" {
		t.Errorf("got %q, %v", got, err)
	}
	_, err = tmpl.Render([]Message{{Role: "assistant", Content: "x"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "first turn must be the user's") {
		t.Errorf("got %v, want the template's message", err)
	}
}

func TestVarsAndReasoning(t *testing.T) {
	tmpl, err := Compile(`{{ enable_thinking }} {{ n + 1 }} {{ tags | join(',') }}{% for m in messages %} {{ m.reasoning_content is defined }}{% endfor %}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "assistant", Content: "a", ReasoningContent: "r"}, {Role: "user", Content: "b"}},
		Options{Vars: map[string]any{"enable_thinking": false, "n": 41, "tags": []string{"x", "y"}}})
	if want := "False 42 x,y True False"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// TestStrftime checks strftime against Go's own formatting of the same
// instants (and the C locale's names).
func TestStrftime(t *testing.T) {
	zone := time.FixedZone("XST", -(3*3600 + 30*60))
	for _, at := range []time.Time{
		time.Date(2026, 3, 7, 9, 5, 4, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, zone),
		time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 12, 30, 0, 0, zone),
	} {
		format := "%Y-%m-%d %H:%M:%S %y %j %I%p %a %A %b %B %Z %z %% %Q|%e"
		want := at.Format("2006-01-02 15:04:05 06 002 03PM Mon Monday Jan January MST -0700") + " % %Q|" + fmt.Sprintf("%2d", at.Day())
		if got := strftime(at, format); got != want {
			t.Errorf("%v:\n got %q\nwant %q", at, got, want)
		}
	}
	if got := strftime(time.Time{}, "100%"); got != "100%" {
		t.Errorf("trailing %%: %q", got)
	}
}

// TestStrftimeNow checks that templates see Options.Now, and the clock
// when it is zero.
func TestStrftimeNow(t *testing.T) {
	tmpl, err := Compile(`{{ strftime_now("%d %b %Y") }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 11, 3, 1, 0, 0, 0, time.UTC)
	if got, err := tmpl.Render(nil, Options{Now: at}); err != nil || got != "03 Nov 2025" {
		t.Errorf("fixed: %q, %v", got, err)
	}
	before := time.Now()
	got, err := tmpl.Render(nil, Options{})
	after := time.Now()
	if err != nil || (got != strftime(before, "%d %b %Y") && got != strftime(after, "%d %b %Y")) {
		t.Errorf("clock: %q, %v", got, err)
	}
	bad, _ := Compile(`{{ strftime_now() }}`, "", "")
	if _, err := bad.Render(nil, Options{}); err == nil {
		t.Error("strftime_now() without a format rendered")
	}
}

// TestConcurrentRender renders the golden conversations from many
// goroutines at once through shared templates; each result equals the one
// rendered alone.
func TestConcurrentRender(t *testing.T) {
	g := readGoldens(t)
	tmpls := goldenTemplates(t)
	now, _ := time.Parse(time.RFC3339, g.Now)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i, c := range g.Cases {
				if (i+w)%2 == 0 || c.Output == nil {
					continue
				}
				msgs := make([]Message, len(c.Messages))
				for j, m := range c.Messages {
					msgs[j] = Message{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent}
				}
				got, err := tmpls[c.Template].Render(msgs, Options{AddGenerationPrompt: c.AddGenerationPrompt, Now: now, Vars: c.Vars})
				if err != nil || got != *c.Output {
					errs <- fmt.Errorf("worker %d, %s/%s: %q, %v", w, c.Template, c.Name, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkRenderQwen3 renders a 26-turn conversation with Qwen3's
// template.
func BenchmarkRenderQwen3(b *testing.B) {
	g := readGoldens(b)
	tmpl := goldenTemplates(b)["qwen3"]
	for _, c := range g.Cases {
		if c.Template != "qwen3" || c.Name != "long_history" || !c.AddGenerationPrompt {
			continue
		}
		msgs := make([]Message, len(c.Messages))
		for j, m := range c.Messages {
			msgs[j] = Message{Role: m.Role, Content: m.Content}
		}
		for b.Loop() {
			if _, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true}); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.Fatal("no qwen3/long_history case")
}
