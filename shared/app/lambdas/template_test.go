package lambdas_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/app"
	"bizdata/shared/app/lambdas"
	"bizdata/shared/business"
	"bizdata/shared/hosted"
	"bizdata/shared/store"
	"bizdata/shared/webhook"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// logicalID is the template's resource name for a function folder:
// get-sale -> GetSaleFunction (the Makefile's build-%Function rule inverts it).
func logicalID(function string) string {
	var b strings.Builder
	for _, p := range strings.Split(function, "-") {
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String() + "Function"
}

type cfnTemplate struct {
	Resources map[string]struct {
		Type       string         `yaml:"Type"`
		Metadata   map[string]any `yaml:"Metadata"`
		Properties map[string]any `yaml:"Properties"`
	} `yaml:"Resources"`
}

func loadTemplate(t *testing.T) cfnTemplate {
	t.Helper()
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl cfnTemplate
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestTemplateMatchesRouteTable(t *testing.T) {
	tpl := loadTemplate(t)
	var inTemplate, inRoutes []string
	defaults := 0
	for id, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" || isDashboardFunction(id) {
			continue // the dashboard's routes: TestDashboardTemplateMatchesRoutes
		}
		events, _ := r.Properties["Events"].(map[string]any)
		for _, ev := range events {
			ev := ev.(map[string]any)
			if ev["Type"] != "HttpApi" {
				continue
			}
			p := ev["Properties"].(map[string]any)
			if _, ok := p["Path"]; !ok { // SAM's $default route: what no route matches
				if id != logicalID(api.DefaultFunction) {
					t.Errorf("%s serves the $default route; only %s should", id, logicalID(api.DefaultFunction))
				}
				defaults++
				continue
			}
			inTemplate = append(inTemplate, id+" "+p["Method"].(string)+" "+p["Path"].(string))
			if r.Metadata["BuildMethod"] != "makefile" {
				t.Errorf("%s: BuildMethod %v, want makefile", id, r.Metadata["BuildMethod"])
			}
		}
	}
	for _, rt := range api.Routes {
		inRoutes = append(inRoutes, logicalID(rt.Function)+" "+rt.Method+" "+rt.Path)
		src, err := os.ReadFile("../../../functions/" + rt.Function + "/main.go")
		if err != nil {
			t.Errorf("route %s: %v", rt.Function, err)
		} else if !strings.Contains(string(src), `lambdas.RunFunction("`+rt.Function+`")`) {
			t.Errorf("functions/%s/main.go does not serve %q", rt.Function, rt.Function)
		}
	}
	for _, rt := range hosted.Routes {
		inRoutes = append(inRoutes, logicalID(rt.Function)+" "+rt.Method+" "+rt.Path)
		src, err := os.ReadFile("../../../functions/" + rt.Function + "/main.go")
		if err != nil || !strings.Contains(string(src), `lambdas.RunHostedFunction("`+rt.Function+`")`) {
			t.Errorf("functions/%s/main.go does not serve %q (%v)", rt.Function, rt.Function, err)
		}
	}
	if defaults != 1 {
		t.Errorf("%d functions serve the $default route, want 1", defaults)
	}
	if src, err := os.ReadFile("../../../functions/" + api.DefaultFunction + "/main.go"); err != nil || !strings.Contains(string(src), `lambdas.RunFunction("`+api.DefaultFunction+`")`) {
		t.Errorf("functions/%s/main.go does not serve the $default route (%v)", api.DefaultFunction, err)
	}
	sort.Strings(inTemplate)
	sort.Strings(inRoutes)
	if d := cmp.Diff(inRoutes, inTemplate); d != "" {
		t.Errorf("template.yaml and the route table differ (-routes +template):\n%s", d)
	}
}

func TestTemplateTableMatchesGo(t *testing.T) {
	tpl := loadTemplate(t)
	tbl := tpl.Resources["Table"].Properties
	def := store.TableDefinition("x")

	type kv = map[string]string
	var wantAttrs, gotAttrs []kv
	for _, a := range def.AttributeDefinitions {
		wantAttrs = append(wantAttrs, kv{"AttributeName": *a.AttributeName, "AttributeType": string(a.AttributeType)})
	}
	for _, a := range tbl["AttributeDefinitions"].([]any) {
		a := a.(map[string]any)
		gotAttrs = append(gotAttrs, kv{"AttributeName": a["AttributeName"].(string), "AttributeType": a["AttributeType"].(string)})
	}
	if d := cmp.Diff(wantAttrs, gotAttrs); d != "" {
		t.Errorf("attribute definitions (-go +template):\n%s", d)
	}
	keys := func(v any) []string {
		var out []string
		for _, k := range v.([]any) {
			k := k.(map[string]any)
			out = append(out, k["AttributeName"].(string)+" "+k["KeyType"].(string))
		}
		return out
	}
	var wantKeys []string
	for _, k := range def.KeySchema {
		wantKeys = append(wantKeys, *k.AttributeName+" "+string(k.KeyType))
	}
	if d := cmp.Diff(wantKeys, keys(tbl["KeySchema"])); d != "" {
		t.Errorf("key schema (-go +template):\n%s", d)
	}
	want := map[string][]string{}
	for _, g := range def.GlobalSecondaryIndexes {
		var ks []string
		for _, k := range g.KeySchema {
			ks = append(ks, *k.AttributeName+" "+string(k.KeyType))
		}
		want[aws.ToString(g.IndexName)] = append(append(ks, string(g.Projection.ProjectionType)), g.Projection.NonKeyAttributes...)
	}
	got := map[string][]string{}
	for _, g := range tbl["GlobalSecondaryIndexes"].([]any) {
		g := g.(map[string]any)
		proj := g["Projection"].(map[string]any)
		got[g["IndexName"].(string)] = append(keys(g["KeySchema"]), proj["ProjectionType"].(string))
		if inc, ok := proj["NonKeyAttributes"].([]any); ok {
			for _, a := range inc {
				got[g["IndexName"].(string)] = append(got[g["IndexName"].(string)], a.(string))
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("indexes (-go +template):\n%s", d)
	}
	stream := tbl["StreamSpecification"].(map[string]any)["StreamViewType"]
	if stream != string(def.StreamSpecification.StreamViewType) {
		t.Errorf("stream view %v, want %s", stream, def.StreamSpecification.StreamViewType)
	}
	ttl := tbl["TimeToLiveSpecification"].(map[string]any)
	if ttl["AttributeName"] != store.TTLAttribute || ttl["Enabled"] != true {
		t.Errorf("ttl %v, want %s enabled", ttl, store.TTLAttribute)
	}
	if tbl["BillingMode"] != string(def.BillingMode) {
		t.Errorf("billing %v, want %s", tbl["BillingMode"], def.BillingMode)
	}
}

// TestMakefileBuildsEveryFunction checks that SAM's `make build-<LogicalId>`
// builds the function's own folder.
func TestMakefileBuildsEveryFunction(t *testing.T) {
	for _, rt := range append(api.Routes, api.Route{Function: api.DefaultFunction}) {
		out, err := exec.Command("make", "-s", "-n", "-C", "../../..", "build-"+logicalID(rt.Function), "ARTIFACTS_DIR=/tmp/x").CombinedOutput()
		if err != nil {
			t.Fatalf("make build-%s: %v\n%s", logicalID(rt.Function), err, out)
		}
		if !strings.Contains(string(out), "./functions/"+rt.Function+"\n") || !strings.Contains(string(out), "/tmp/x/bootstrap") {
			t.Errorf("make build-%s does not build ./functions/%s:\n%s", logicalID(rt.Function), rt.Function, out)
		}
	}
}

// TestEveryFunctionIsDeclared checks that each folder under functions/ is a
// function of template.yaml with the makefile builder, and the reverse.
func TestEveryFunctionIsDeclared(t *testing.T) {
	tpl := loadTemplate(t)
	var declared, folders []string
	for id, r := range tpl.Resources {
		if r.Type == "AWS::Serverless::Function" {
			declared = append(declared, id)
			if r.Metadata["BuildMethod"] != "makefile" {
				t.Errorf("%s: BuildMethod %v", id, r.Metadata["BuildMethod"])
			}
		}
	}
	entries, err := os.ReadDir("../../../functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		folders = append(folders, logicalID(e.Name()))
	}
	sort.Strings(declared)
	sort.Strings(folders)
	if d := cmp.Diff(folders, declared); d != "" {
		t.Errorf("functions/ and template.yaml differ (-folders +template):\n%s", d)
	}
	// The stream's filter passes payment, refund and event inserts only, as
	// the devserver's poller (webhook.Streamed) does.
	ev := tpl.Resources["DeliverWebhooksFunction"].Properties["Events"].(map[string]any)["PaymentInserts"].(map[string]any)["Properties"].(map[string]any)
	pattern := ev["FilterCriteria"].(map[string]any)["Filters"].([]any)[0].(map[string]any)["Pattern"].(string)
	if pattern != `{"eventName": ["INSERT"], "dynamodb": {"NewImage": {"type": {"S": ["payment", "refund", "event"]}}}}` {
		t.Errorf("stream filter %s", pattern)
	}
	if fmt.Sprint(ev["FunctionResponseTypes"]) != "[ReportBatchItemFailures]" || ev["BisectBatchOnFunctionError"] != true {
		t.Errorf("stream event source %v", ev)
	}
	// The report figures' consumer reads the same stream through its own
	// filter, as the devserver's second poller (lambdas.IsFiguresInsert) does.
	ev = tpl.Resources["ApplyReportFiguresFunction"].Properties["Events"].(map[string]any)["FiguresInserts"].(map[string]any)["Properties"].(map[string]any)
	pattern = ev["FilterCriteria"].(map[string]any)["Filters"].([]any)[0].(map[string]any)["Pattern"].(string)
	if pattern != `{"eventName": ["INSERT"], "dynamodb": {"NewImage": {"type": {"S": ["`+store.FiguresType+`"]}}}}` {
		t.Errorf("report figures' stream filter %s", pattern)
	}
	if fmt.Sprint(ev["FunctionResponseTypes"]) != "[ReportBatchItemFailures]" {
		t.Errorf("report figures' stream event source %v", ev)
	}
}

// TestSecretsOnlyForSigners: callback secrets live under their own key
// prefix, and every function but the three that sign webhooks is denied any
// item under it by an IAM condition on dynamodb:LeadingKeys. The one
// exception is clear-test-data's: it deletes the secrets of retired test
// twins, and a live account's stay denied to it.
func TestSecretsOnlyForSigners(t *testing.T) {
	// The functions that sign deliveries read secrets; no other may.
	signers := map[string]bool{"RetryWebhooksFunction": true, "TestWebhookFunction": true, "TestWebhookEndpointFunction": true}
	// The functions that set, create, rotate or delete secrets write their
	// items blind: denied reads, not writes.
	writers := map[string]bool{"UpdateWebhookSettingsFunction": true, "AddWebhookEndpointFunction": true,
		"RotateEndpointSecretFunction": true, "DeleteWebhookEndpointFunction": true, "DashboardActionsFunction": true}
	// The dashboard's forms send test notifications, reading the callback
	// secret in one BatchGetItem with the account (store.FindAccount) and an
	// endpoint's secrets by their key (store.EndpointSecrets): their
	// function may read one secret item by its key, and never list them.
	keyReaders := map[string]bool{"DashboardActionsFunction": true}
	live := business.NewAccountID()
	secret := store.SecretKeyPrefix + live // a live account's callback secret and its endpoints' secrets
	denied := func(stmts []iamStatement, action string, keys ...string) bool {
		for _, s := range stmts {
			if s.Effect == "Deny" && s.applies(t, ddbRequest{Action: action, LeadingKeys: keys}) {
				return true
			}
		}
		return false
	}
	all := functionStatements(t)
	for id, stmts := range all {
		if len(stmts) == 0 {
			continue // no DynamoDB access at all (route-not-found)
		}
		for _, read := range []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"} {
			switch d := denied(stmts, read, secret); {
			case keyReaders[id]:
				if d != (read == "dynamodb:Query") {
					t.Errorf("%s: %s of secrets denied %v; want GetItem and BatchGetItem allowed, Query denied", id, read, d)
				}
			case signers[id] && d:
				t.Errorf("%s signs webhooks but is denied the secrets (%s)", id, read)
			case !signers[id] && !d:
				t.Errorf("%s can read callback secrets (%s): its policy lacks the Deny on %s*", id, read, store.SecretKeyPrefix)
			}
		}
		for _, write := range []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} {
			if writers[id] && denied(stmts, write, secret) {
				t.Errorf("%s writes secret items but its policy denies writes to them (%s): deny only the reads", id, write)
			}
		}
	}

	// clear-test-data reads and deletes every partition of a retired twin,
	// its secrets too, and nothing of a live account.
	purge := all["ClearTestDataFunction"]
	permits := func(action string, keys ...string) bool {
		ok, _ := permitted(t, purge, ddbRequest{Action: action, LeadingKeys: keys})
		return ok
	}
	for _, gen := range []int64{1, 2, 12} {
		twin := business.TwinID(live, gen)
		for _, keys := range [][]string{{store.SecretKeyPrefix + twin}, {"A#" + twin}, {"A#" + twin + "#SALE#100001"}, {"A#" + twin, "A#" + twin + "#UNIQUE#item_slug#rice"}} {
			for _, action := range []string{"dynamodb:Query", "dynamodb:BatchWriteItem"} {
				if !permits(action, keys...) {
					t.Errorf("ClearTestDataFunction may not %s %v, a retired test twin's", action, keys)
				}
			}
		}
		for _, keys := range [][]string{{secret}, {secret + "#x"}, {store.SecretKeyPrefix + twin, secret}, {"A#" + live}, {"A#" + live + "#SALE#100001"}, {"A#" + twin, "A#" + live}} {
			for _, action := range []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:PutItem", "dynamodb:DeleteItem"} {
				if action == "dynamodb:GetItem" && slices.Contains(keys, "A#"+live) {
					continue // the live account item: its registry and purging list
				}
				if permits(action, keys...) {
					t.Errorf("ClearTestDataFunction may %s %v: live data", action, keys)
				}
			}
		}
	}
	for _, keys := range [][]string{{secret}, {store.SecretKeyPrefix + business.TwinID(live, 1), secret}} {
		if !denied(purge, "dynamodb:BatchWriteItem", keys...) {
			t.Errorf("ClearTestDataFunction's Deny spares %v", keys)
		}
	}
}

// TestTemplateOperations: the stack tells its operator when it hurts and
// bounds what it accepts: tracing, log retention, stage throttling, and the
// three alarms with an optional SNS topic.
func TestTemplateOperations(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Globals struct {
			Function map[string]any `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type       string         `yaml:"Type"`
			Properties map[string]any `yaml:"Properties"`
		} `yaml:"Resources"`
		Conditions map[string]any `yaml:"Conditions"`
	}
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	g := tpl.Globals.Function
	if g["Tracing"] != "Active" {
		t.Errorf("Globals.Function.Tracing %v", g["Tracing"])
	}
	logs := tpl.Resources["FunctionLogs"]
	if lc, _ := g["LoggingConfig"].(map[string]any); lc["LogFormat"] != "JSON" || lc["LogGroup"] == nil || logs.Type != "AWS::Logs::LogGroup" || logs.Properties["RetentionInDays"] == nil {
		t.Errorf("logging %v, log group %v", g["LoggingConfig"], logs)
	}
	routes, _ := tpl.Resources["HttpApi"].Properties["DefaultRouteSettings"].(map[string]any)
	if routes["ThrottlingRateLimit"] == nil || routes["ThrottlingBurstLimit"] == nil {
		t.Errorf("HttpApi throttling %v", routes)
	}
	if tpl.Conditions["HasAlarmTopic"] == nil {
		t.Error("no HasAlarmTopic condition")
	}
	alarms := map[string]func(p map[string]any) bool{
		"Api5xxRateAlarm": func(p map[string]any) bool { return strings.Contains(fmt.Sprint(p["Metrics"]), "5xx") },
		"StreamFailuresAlarm": func(p map[string]any) bool {
			return p["Namespace"] == "AWS/SQS" && strings.Contains(fmt.Sprint(p["Dimensions"]), "WebhookStreamFailures")
		},
		"WebhooksFailedAlarm": func(p map[string]any) bool {
			return p["Namespace"] == webhook.MetricNamespace && p["MetricName"] == webhook.MetricDeliveriesFailed
		},
	}
	for name, ok := range alarms {
		r, found := tpl.Resources[name]
		if !found || r.Type != "AWS::CloudWatch::Alarm" || !ok(r.Properties) {
			t.Errorf("alarm %s: %v", name, r)
			continue
		}
		if !strings.Contains(fmt.Sprint(r.Properties["AlarmActions"]), "HasAlarmTopic") {
			t.Errorf("alarm %s does not notify the alarm topic", name)
		}
	}
}

// webhookFunctions are the functions that reach merchants' receivers.
var webhookFunctions = []string{"DeliverWebhooksFunction", "RetryWebhooksFunction", "TestWebhookFunction", "TestWebhookEndpointFunction"}

// TestWebhookFunctionLimits: each webhook function may have concurrency
// reserved by the WebhookReservedConcurrency parameter (none by default);
// the schedule's run of RetryWebhooksFunction is never retried (a retry
// would overlap the next run) and its timeout covers a run's dispatching, its
// drain and its return; TestWebhookFunction's timeout covers the receiver's
// TestTimeout after one DynamoDB call that used all its retries, and
// TestWebhookEndpointFunction's that and the time it keeps to record the
// delivery (api.EndpointTestMargin).
func TestWebhookFunctionLimits(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// at follows mapping keys from n; nil when one is missing.
	at := func(n *yaml.Node, keys ...string) *yaml.Node {
		if n.Kind == yaml.DocumentNode {
			n = n.Content[0]
		}
		for _, k := range keys {
			var next *yaml.Node
			for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return nil
			}
			n = next
		}
		return n
	}
	if p := at(&doc, "Parameters", "WebhookReservedConcurrency"); p == nil || nodeText(at(p, "Type")) != "Number" || nodeText(at(p, "Default")) != "0" ||
		!strings.Contains(nodeText(at(p, "Description")), "100 unreserved") {
		t.Errorf("parameter WebhookReservedConcurrency: want a Number, default 0, whose description names the 100 unreserved executions")
	}
	if c := at(&doc, "Conditions", "ReserveWebhookConcurrency"); c == nil || !strings.Contains(nodeText(c), "WebhookReservedConcurrency") {
		t.Errorf("no condition ReserveWebhookConcurrency on WebhookReservedConcurrency")
	}
	for _, id := range webhookFunctions {
		want := "!If [ReserveWebhookConcurrency, !Ref WebhookReservedConcurrency, !Ref AWS::NoValue]"
		if got := nodeText(at(&doc, "Resources", id, "Properties", "ReservedConcurrentExecutions")); got != want {
			t.Errorf("%s: ReservedConcurrentExecutions %q, want %q", id, got, want)
		}
	}
	inv := at(&doc, "Resources", "RetryWebhooksFunction", "Properties", "EventInvokeConfig")
	if inv == nil || nodeText(at(inv, "MaximumRetryAttempts")) != "0" || nodeText(at(inv, "MaximumEventAgeInSeconds")) != "60" {
		t.Errorf("RetryWebhooksFunction: EventInvokeConfig %q, want MaximumRetryAttempts 0 and MaximumEventAgeInSeconds 60", nodeText(inv))
	}
	retry, err := strconv.Atoi(nodeText(at(&doc, "Resources", "RetryWebhooksFunction", "Properties", "Timeout")))
	if need := lambdas.DispatchFor + lambdas.DrainFor + lambdas.ReturnMargin; err != nil || time.Duration(retry)*time.Second < need {
		t.Errorf("RetryWebhooksFunction: Timeout %d s, want at least %s (lambdas.DispatchFor + lambdas.DrainFor + lambdas.ReturnMargin)", retry, need)
	}
	for id, margin := range map[string]time.Duration{"TestWebhookFunction": 0, "TestWebhookEndpointFunction": api.EndpointTestMargin} {
		timeout := at(&doc, "Resources", id, "Properties", "Timeout")
		if timeout == nil {
			timeout = at(&doc, "Globals", "Function", "Timeout")
		}
		secs, err := strconv.Atoi(nodeText(timeout))
		if need := webhook.TestTimeout + app.DynamoDBCallWorstCase + margin; err != nil || time.Duration(secs)*time.Second < need {
			t.Errorf("%s: Timeout %q s, want at least %s (webhook.TestTimeout %s + one DynamoDB call's worst case %s + %s to record it)",
				id, nodeText(timeout), need, webhook.TestTimeout, app.DynamoDBCallWorstCase, margin)
		}
	}
}

// nodeText renders a YAML node in flow style, its tags included ("" for nil).
func nodeText(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	tag := ""
	if n.Style&yaml.TaggedStyle != 0 {
		tag = n.Tag + " "
	}
	switch n.Kind {
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = nodeText(c)
		}
		return tag + "[" + strings.Join(parts, ", ") + "]"
	case yaml.MappingNode:
		parts := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, nodeText(n.Content[i])+": "+nodeText(n.Content[i+1]))
		}
		return tag + "{" + strings.Join(parts, ", ") + "}"
	}
	return tag + n.Value
}
