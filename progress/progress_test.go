package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestBarLine(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(NewTerminal(&out), "replay", nil)
	t0 := time.Unix(1000, 0)
	b.Update(t0, 0, 100<<20, "")
	b.Update(t0.Add(10*time.Second), 25<<20, 100<<20, "1520 txn/s")
	line := b.Line(25<<20, 100<<20, "1520 txn/s")
	for _, want := range []string{"replay [======>", " 25.0%", "25.0 MiB/100.0 MiB", "1520 txn/s", "ETA 0:30"} {
		if !strings.Contains(line, want) {
			t.Errorf("bar %q lacks %q", line, want)
		}
	}
	if got := b.Line(5, 0, ""); got != "replay 5 B" {
		t.Errorf("bar without a total: %q", got)
	}
	if got := NewBar(NewTerminal(&out), "x", nil).Line(1, 2, ""); !strings.HasSuffix(got, "ETA --") {
		t.Errorf("ETA before any rate is known: %q", got)
	}
}

func TestTerminalKeepsLogLinesAboveTheBar(t *testing.T) {
	var out bytes.Buffer
	term := NewTerminal(&out)
	term.Write([]byte("first log line\n"))
	term.draw("BAR 1")
	term.Write([]byte("second log line\n"))
	term.draw("")
	want := "first log line\n" + clearLine + "BAR 1" + clearLine + "second log line\n" + "BAR 1" + clearLine
	if out.String() != want {
		t.Errorf("terminal output\n got  %q\n want %q", out.String(), want)
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is not a terminal")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) {
		t.Errorf("%s is not a terminal", os.DevNull)
	}
}

func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 75 * time.Second: "1:15", 3*time.Hour + 5*time.Second: "3:00:05"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %s, want %s", d, got, want)
		}
	}
	for n, want := range map[int64]string{12: "12 B", 2048: "2.0 KiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %s, want %s", n, got, want)
		}
	}
}
