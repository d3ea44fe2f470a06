package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDoStreamEveryToken: with -every_token the request asks for
// continuous usage and a chunk counts as an arrival when its usage grew,
// text or not; without it only chunks with text count.
func TestDoStreamEveryToken(t *testing.T) {
	var asked []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		asked = append(asked, body)
		so, _ := body["stream_options"].(map[string]any)
		every := so["continuous_usage_stats"] == true
		w.Header().Set("Content-Type", "text/event-stream")
		// four tokens: "a", one ending inside a character, its end, "b"
		texts := []string{"a", "", "é", "b"}
		for i, text := range texts {
			if text == "" && !every {
				continue
			}
			u := ""
			if every {
				u = fmt.Sprintf(`,"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}`, i+1, i+2)
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":%q,\"index\":0,\"finish_reason\":null}]%s}\n\n", text, u)
		}
		u := ""
		if every {
			u = `,"usage":{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5}`
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"\",\"index\":0,\"finish_reason\":\"length\"}]%s}\n\n", u)
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":4,\"total_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, every := range []bool{false, true} {
		c := config{url: srv.URL, stream: true, everyToken: every, timeout: 10 * time.Second}
		s := doStream(t.Context(), srv.Client(), c, "x", 4, 1, 0, nil)
		if s.err != nil {
			t.Fatal(s.err)
		}
		want := 3 // the chunks with text
		if every {
			want = 4 // the tokens
		}
		if len(s.chunks) != want || s.tokens != 4 {
			t.Errorf("every_token %v: %d arrivals (want %d), %d tokens (want 4)", every, len(s.chunks), want, s.tokens)
		}
		so, _ := json.Marshal(asked[len(asked)-1]["stream_options"])
		if strings.Contains(string(so), "continuous_usage_stats") != every {
			t.Errorf("every_token %v: stream_options %s", every, so)
		}
	}
}
