// Command corpus runs MariaDB's test suite through prepl (make corpus,
// docs/corpus.md): one line per stop, divergence and test as they happen,
// the summary line last; the whole report goes to --report. It exits 1
// when a stop, a divergence or an error of its own was found.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/prepl/prepl/corpus"
)

func main() {
	var o corpus.Options
	list := flag.String("tests", "testdata/corpus/tests.txt", "file of tests to run, one SUITE.TEST a line")
	excl := flag.String("exclusions", "testdata/corpus/exclusions.txt", "file of tests left out, SUITE.TEST: KIND: why a line")
	only := flag.String("only", "", "run only the listed tests matching this regular expression (e.g. '^(json|period)\\.')")
	images := flag.String("images", "FULL", "binlog_row_image values to run each test with, comma-separated (FULL,MINIMAL,NOBLOB)")
	report := flag.String("report", "corpus-out/report.txt", "file the report is written to")
	flag.StringVar(&o.Prepl, "prepl", "bin/prepl", "the prepl binary (make build)")
	flag.StringVar(&o.MTRDir, "mtr-dir", "", "directory of mysql-test-run.pl (default: where Debian's mariadb-test puts it)")
	flag.IntVar(&o.Jobs, "jobs", 2, "tests run at once")
	flag.StringVar(&o.WorkDir, "work", "", "directory for mtr's vardirs and the reference's states (default: a temporary one)")
	flag.BoolVar(&o.Replica, "replica", false, "also apply each test's binlog with MariaDB's replica (a server serving the files, START SLAVE UNTIL each checkpoint) and compare it with mariadb-binlog | mariadb")
	flag.BoolVar(&o.Keep, "keep", false, "keep each test's mtr vardir and states in --work")
	flag.Parse()

	tests, err := corpus.ReadTests(*list)
	check(err)
	if *only != "" {
		re, err := regexp.Compile(*only)
		check(err)
		var sel []string
		for _, t := range tests {
			if re.MatchString(t) {
				sel = append(sel, t)
			}
		}
		tests = sel
	}
	o.Tests = tests
	o.Exclusions, err = corpus.ReadExclusions(*excl)
	check(err)
	for _, img := range strings.Split(*images, ",") {
		img = strings.ToUpper(strings.TrimSpace(img))
		if img != "FULL" && img != "MINIMAL" && img != "NOBLOB" {
			check(fmt.Errorf("--images: %q is no binlog_row_image: want FULL, MINIMAL or NOBLOB", img))
		}
		o.Images = append(o.Images, img)
	}
	if o.Prepl, err = filepath.Abs(o.Prepl); err != nil {
		check(err)
	}
	o.Say = func(line string) { fmt.Printf("%s %s\n", time.Now().Format("15:04:05"), line) }

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := corpus.Run(ctx, o)
	if res == nil {
		check(err)
	}
	check(os.MkdirAll(filepath.Dir(*report), 0o755))
	f, ferr := os.Create(*report)
	check(ferr)
	check(res.WriteReport(f, strings.Join(os.Args, " ")))
	check(f.Close())
	fmt.Println(res.Summary())
	fmt.Printf("report: %s\n", *report)
	if err != nil {
		check(err)
	}
	if res.Failed() {
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(2)
	}
}
