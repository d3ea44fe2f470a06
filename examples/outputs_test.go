package examples

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var notebookFile = flag.String("notebook-file", "wick.ipynb", "executed notebook whose outputs TestNotebookOutputs checks")

// Limits on what one output may hold, so that the notebook stays small
// enough to read and to diff: a chart or graph is one image of at most
// maxImage bytes (base64 included), everything else at most maxText.
const (
	maxImage = 128 << 10
	maxText  = 16 << 10
)

// output is one output of a code cell, as nbformat 4 stores it.
type output struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name"` // stream: stdout or stderr
	Text       json.RawMessage            `json:"text"` // stream: a string or a list of lines
	Data       map[string]json.RawMessage `json:"data"` // display_data and execute_result
	EName      string                     `json:"ename"`
	EValue     string                     `json:"evalue"`
}

// joinText returns a string or a list of strings as one string.
func joinText(raw json.RawMessage) (string, error) {
	var lines []string
	if err := json.Unmarshal(raw, &lines); err == nil {
		return strings.Join(lines, ""), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// twoResults matches a value line like "55 <nil>": the two results of a
// final fmt.Println, which gophernotes shows.
var twoResults = regexp.MustCompile(`^-?\d+ <nil>$`)

// outputProblems returns what is wrong with the outputs of an executed
// notebook: a code cell that did not run in order, an error, text on
// stderr, a warning, the results of a final fmt.Println, an output with
// more than one image or a too large one; and whether it saw the outputs
// the tour relies on (an HTML table, a PNG chart, an SVG graph).
func outputProblems(b []byte) (problems []string, seen map[string]bool, err error) {
	var nb struct {
		Cells []struct {
			ID             string          `json:"id"`
			CellType       string          `json:"cell_type"`
			ExecutionCount *int            `json:"execution_count"`
			Outputs        json.RawMessage `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, nil, err
	}
	seen = map[string]bool{}
	report := func(id, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("cell %s: ", id)+fmt.Sprintf(format, args...))
	}
	count := 0
	for _, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		count++
		if c.ExecutionCount == nil || *c.ExecutionCount != count {
			report(c.ID, "execution count %v, want %d: run every cell once, in order", c.ExecutionCount, count)
		}
		var outs []output
		if err := json.Unmarshal(c.Outputs, &outs); err != nil {
			return nil, nil, fmt.Errorf("cell %s: outputs: %v", c.ID, err)
		}
		for _, o := range outs {
			switch o.OutputType {
			case "error":
				report(c.ID, "error %s: %s", o.EName, o.EValue)
			case "stream":
				text, err := joinText(o.Text)
				if err != nil {
					return nil, nil, fmt.Errorf("cell %s: stream text: %v", c.ID, err)
				}
				if o.Name != "stdout" {
					report(c.ID, "prints on %s: %.200q", o.Name, text)
				}
				if strings.Contains(strings.ToLower(text), "warning") {
					report(c.ID, "prints a warning: %.300q", text)
				}
				if len(text) > maxText {
					report(c.ID, "prints %d bytes, more than %d", len(text), maxText)
				}
			case "display_data", "execute_result":
				images := 0
				for mime, raw := range o.Data {
					seen[mime] = true
					size := len(raw)
					if strings.HasPrefix(mime, "image/") {
						images++
						if size > maxImage {
							report(c.ID, "%s output of %d bytes, more than %d", mime, size, maxImage)
						}
					} else if size > maxText {
						report(c.ID, "%s output of %d bytes, more than %d", mime, size, maxText)
					}
					if mime == "text/plain" {
						if s, err := joinText(raw); err == nil && twoResults.MatchString(strings.TrimSpace(s)) {
							report(c.ID, "shows %q, the results of a final fmt.Println", s)
						}
					}
				}
				if images > 1 {
					report(c.ID, "one output holds %d images; a picture is stored once", images)
				}
			default:
				report(c.ID, "unknown output type %q", o.OutputType)
			}
		}
	}
	return problems, seen, nil
}

// TestNotebookOutputs checks the outputs stored in the notebook (or in
// -notebook-file, which scripts/notebook.sh points at a fresh run in the
// gophernotes kernel): every code cell ran once and in order, none failed
// or warned, each picture is stored as one image, and the table, chart and
// graph of the tour are there.
func TestNotebookOutputs(t *testing.T) {
	b, err := os.ReadFile(*notebookFile)
	if err != nil {
		t.Fatal(err)
	}
	problems, seen, err := outputProblems(b)
	if err != nil {
		t.Fatalf("%s: %v", *notebookFile, err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", *notebookFile, p)
	}
	for _, mime := range []string{"text/html", "image/png", "image/svg+xml"} {
		if !seen[mime] {
			t.Errorf("%s: no %s output; run scripts/notebook.sh --inplace to store the outputs", *notebookFile, mime)
		}
	}
}

func TestOutputProblems(t *testing.T) {
	const good = `{"cells": [
		{"id": "a", "cell_type": "markdown", "source": []},
		{"id": "b", "cell_type": "code", "execution_count": 1, "outputs": [
			{"output_type": "stream", "name": "stdout", "text": ["hello\n"]},
			{"output_type": "execute_result", "data": {"text/html": "<p>t</p>", "text/plain": "t"}}]},
		{"id": "c", "cell_type": "code", "execution_count": 2, "outputs": [
			{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}}]}]}`
	problems, seen, err := outputProblems([]byte(good))
	if err != nil || len(problems) != 0 || !seen["text/html"] || !seen["image/png"] {
		t.Fatalf("good notebook: problems %q, seen %v, err %v", problems, seen, err)
	}
	for _, c := range []struct{ cell, want string }{
		{`{"id": "x", "cell_type": "code", "execution_count": null, "outputs": []}`, "execution count"},
		{`{"id": "x", "cell_type": "code", "execution_count": 3, "outputs": []}`, "want 1"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "error", "ename": "ERROR", "evalue": "undefined: x"}]}`, "undefined: x"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout", "text": "// warning: skipping import of func sync.OnceValue"}]}`, "warning"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "stream", "name": "stderr", "text": "oops"}]}`, "stderr"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "execute_result", "data": {"text/plain": "55 <nil>"}}]}`, "fmt.Println"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBO", "image/svg+xml": "<svg/>"}}]}`, "2 images"},
		{`{"id": "x", "cell_type": "code", "execution_count": 1, "outputs": [{"output_type": "display_data", "data": {"image/png": "` + strings.Repeat("A", maxImage) + `"}}]}`, "more than"},
	} {
		problems, _, err := outputProblems([]byte(`{"cells": [` + c.cell + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || !strings.Contains(problems[0], c.want) {
			t.Errorf("%s: problems %q, want one about %q", c.cell, problems, c.want)
		}
	}
}
