package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"

	"github.com/prepl/prepl/sandbox"
)

const (
	dashboardFile  = "../../docs/grafana-dashboard.json"
	alertsFile     = "../../docs/prometheus-alerts.yml"
	alertTestsFile = "../../docs/prometheus-alerts.test.yml"
)

// alertRules is the part of a Prometheus rules file prepl's rules use;
// read strictly, so a misspelt key is an error.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// labelValuesQuery is Grafana's label_values(SELECTOR, LABEL) in a
// template variable's query.
var labelValuesQuery = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)

// dashboardQueries returns every PromQL expression of the dashboard,
// keyed by where it is: panel targets' expr (rows' nested panels too) and
// the template variables' label_values queries.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	out := map[string]string{}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if title, ok := v["title"].(string); ok {
				where += "/" + title
			}
			if e, ok := v["expr"].(string); ok {
				out[fmt.Sprintf("%s[%v]", where, v["refId"])] = e
			}
			for _, x := range v {
				walk(where, x)
			}
		case []any:
			for _, x := range v {
				walk(where, x)
			}
		}
	}
	walk("dashboard", doc["panels"])
	vars, _ := doc["templating"].(map[string]any)["list"].([]any)
	for _, v := range vars {
		v := v.(map[string]any)
		if def, ok := v["definition"].(string); ok {
			if m := labelValuesQuery.FindStringSubmatch(def); m != nil {
				out["variable $"+v["name"].(string)] = m[1]
			}
		}
	}
	return out
}

func readAlertRules(t *testing.T) alertRules {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	if err := yaml.UnmarshalStrict(data, &rules); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	return rules
}

// queriedSelectors is every selector of the dashboard and the alert
// rules, with where it is used.
func queriedSelectors(t *testing.T) map[string][]selector {
	t.Helper()
	exprs := dashboardQueries(t)
	for _, g := range readAlertRules(t).Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	out := map[string][]selector{}
	for where, e := range exprs {
		sels, err := promSelectors(e)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if len(sels) == 0 {
			t.Errorf("%s: no metric in %q", where, e)
		}
		out[where] = sels
	}
	return out
}

// TestDashboardShowsWhatAnOperatorWatches: the dashboard is valid Grafana
// JSON whose panels read the metrics for lag, rates, busy workers,
// retries, serialization reasons, reconnects and errors, every query on
// the data source variable.
func TestDashboardShowsWhatAnOperatorWatches(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				Type string `json:"type"`
				UID  string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ H, W, X, Y int } `json:"gridPos"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Title == "" || doc.UID == "" || !slices.ContainsFunc(doc.Templating.List, func(v struct{ Name, Type string }) bool {
		return v.Name == "datasource" && v.Type == "datasource"
	}) {
		t.Errorf("dashboard: want a title, a uid and a datasource variable")
	}
	ids := map[int]bool{}
	for _, p := range doc.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: bad gridPos %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: want the ${datasource} variable and targets", p.Title)
		}
	}
	used := map[string]bool{}
	for _, e := range dashboardQueries(t) {
		sels, _ := promSelectors(e)
		for _, s := range sels {
			used[s.name] = true
		}
	}
	for _, m := range []string{"prepl_lag_seconds", "prepl_source_behind_bytes", "prepl_transactions_applied_total",
		"prepl_rows_applied_total", "prepl_bytes_applied_total", "prepl_workers", "prepl_worker_busy_seconds_total",
		"prepl_retries_total", "prepl_serialized_total", "prepl_reconnects_total", "prepl_errors_total",
		"prepl_commit_unit_transactions_bucket", "prepl_queue_bytes", "prepl_window_bytes", "prepl_concurrency"} {
		if !used[m] {
			t.Errorf("no dashboard panel shows %s", m)
		}
	}
}

// TestAlertRulesParse reads the alert rules strictly and checks what
// each must have; with promtool on the PATH (Debian: apt-get install
// prometheus) it also runs `promtool check rules` and the rules' unit
// tests, docs/prometheus-alerts.test.yml.
func TestAlertRulesParse(t *testing.T) {
	rules := readAlertRules(t)
	var names []string
	for _, g := range rules.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: want a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("rule %q: want alert and expr", r.Alert)
			}
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("rule %s: for: %v", r.Alert, err)
				}
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("rule %s: severity %q, want critical or warning", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("rule %s: want a summary and a description", r.Alert)
			}
			if _, err := promSelectors(r.Expr); err != nil {
				t.Errorf("rule %s: %v", r.Alert, err)
			}
		}
	}
	sort.Strings(names)
	for _, want := range []string{"PreplDown", "PreplFallingBehindSource", "PreplFatalError", "PreplLagHigh", "PreplReconnectStorm"} {
		if !slices.Contains(names, want) {
			t.Errorf("no alert %s (have %v)", want, names)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("promtool not on the PATH: the rules were checked by the parse above only")
		return
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertTestsFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestDashboardAndAlertMetricsExist scrapes a running prepl replicate and
// finds every metric the dashboard and the alert rules query, with the
// label values their matchers name.
func TestDashboardAndAlertMetricsExist(t *testing.T) {
	t.Parallel()
	queried := queriedSelectors(t)
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	// A backlog of transactions on a few hot rows, each its own commit
	// unit: read ahead together, they wait for each other, so that
	// prepl_serialized_total, exported for reasons seen, has one.
	counterWorkload(t, db, 400, 4)
	total := sourceTxns(t, db)
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--commit-unit", "1", "--progress", "0")
	waitFor(t, "the catch-up", func() bool {
		st := r.status(t)
		return st.CaughtUp && st.Transactions.Applied == total
	})

	resp, err := http.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	// series: name → label sets, histograms under their _bucket, _sum and
	// _count names as PromQL sees them.
	series := map[string][]map[string]string{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			names := []string{name}
			if f.GetType().String() == "HISTOGRAM" {
				names = []string{name + "_bucket", name + "_sum", name + "_count"}
			}
			for _, n := range names {
				series[n] = append(series[n], labels)
			}
		}
	}
	// Series Prometheus makes itself when it scrapes, not in /metrics.
	scraper := map[string]bool{"up": true}

	var wheres []string
	for w := range queried {
		wheres = append(wheres, w)
	}
	sort.Strings(wheres)
	checked := 0
	for _, where := range wheres {
		for _, s := range queried[where] {
			if scraper[s.name] {
				continue
			}
			checked++
			if !slices.ContainsFunc(series[s.name], func(have map[string]string) bool { return hasLabels(have, s.labels) }) {
				t.Errorf("%s queries %s: not in /metrics (series of that name: %v)", where, s, series[s.name])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no metric checked")
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, r.output())
	}
}

// hasLabels reports whether a scraped series has the labels a selector
// requires. job and instance are the scrape target's, which Prometheus
// adds.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if k == "job" || k == "instance" {
			continue
		}
		if have[k] != v {
			return false
		}
	}
	return true
}
