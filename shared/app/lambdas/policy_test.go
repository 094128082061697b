package lambdas_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A small model of how IAM judges a DynamoDB request against a function's
// policies in template.yaml: enough of it to check that every call the
// code makes is allowed and not denied, with the conditions the template
// uses (dynamodb:LeadingKeys, dynamodb:Attributes, dynamodb:ReturnValues).
// DynamoDB Local enforces no IAM, so this is where a condition that would
// refuse a real call on AWS shows.

// ddbRequest is what IAM sees of one DynamoDB action: a transaction is one
// request per item, each as its own action.
type ddbRequest struct {
	Action string // "dynamodb:GetItem"
	Index  string // the index a Query reads; "" for the table
	// LeadingKeys are the partition key values the request touches (none
	// for a Scan).
	LeadingKeys []string
	// Attributes are the top-level attribute names an UpdateItem names
	// (its key, its update and condition expressions); nil when not
	// computed, which IAM treats as a key absent from the request.
	Attributes []string
}

func (r ddbRequest) String() string {
	s := r.Action
	if r.Index != "" {
		s += " on index " + r.Index
	}
	s += fmt.Sprintf(" %v", r.LeadingKeys)
	if r.Attributes != nil {
		s += fmt.Sprintf(" attributes %v", r.Attributes)
	}
	return s
}

// ddbRequests returns the requests IAM judges for one DynamoDB operation
// with input params, on the table's partition key PK.
func ddbRequests(operation string, params any) []ddbRequest {
	pk := func(item map[string]types.AttributeValue) string {
		if s, ok := item["PK"].(*types.AttributeValueMemberS); ok {
			return s.Value
		}
		return ""
	}
	one := func(action string, keys ...string) []ddbRequest {
		return []ddbRequest{{Action: "dynamodb:" + action, LeadingKeys: keys}}
	}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		return one("GetItem", pk(in.Key))
	case *dynamodb.PutItemInput:
		return one("PutItem", pk(in.Item))
	case *dynamodb.DeleteItemInput:
		return one("DeleteItem", pk(in.Key))
	case *dynamodb.UpdateItemInput:
		return []ddbRequest{updateRequest(in.Key, in.UpdateExpression, in.ConditionExpression, in.ExpressionAttributeNames)}
	case *dynamodb.QueryInput:
		r := ddbRequest{Action: "dynamodb:Query", Index: deref(in.IndexName)}
		if m := keyCondition.FindStringSubmatch(deref(in.KeyConditionExpression)); m != nil {
			if s, ok := in.ExpressionAttributeValues[m[2]].(*types.AttributeValueMemberS); ok {
				r.LeadingKeys = []string{s.Value}
			}
		}
		return []ddbRequest{r}
	case *dynamodb.ScanInput:
		return []ddbRequest{{Action: "dynamodb:Scan", Index: deref(in.IndexName)}}
	case *dynamodb.BatchGetItemInput:
		r := ddbRequest{Action: "dynamodb:BatchGetItem"}
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				r.LeadingKeys = append(r.LeadingKeys, pk(k))
			}
		}
		return []ddbRequest{r}
	case *dynamodb.BatchWriteItemInput:
		// IAM sees every partition key of the batch at once: a Deny on
		// ForAnyValue refuses the whole batch when one item matches.
		r := ddbRequest{Action: "dynamodb:BatchWriteItem"}
		for _, reqs := range in.RequestItems {
			for _, w := range reqs {
				if w.DeleteRequest != nil {
					r.LeadingKeys = append(r.LeadingKeys, pk(w.DeleteRequest.Key))
				}
				if w.PutRequest != nil {
					r.LeadingKeys = append(r.LeadingKeys, pk(w.PutRequest.Item))
				}
			}
		}
		return []ddbRequest{r}
	case *dynamodb.TransactWriteItemsInput:
		var out []ddbRequest
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, one("PutItem", pk(it.Put.Item))...)
			case it.Update != nil:
				out = append(out, updateRequest(it.Update.Key, it.Update.UpdateExpression, it.Update.ConditionExpression, it.Update.ExpressionAttributeNames))
			case it.Delete != nil:
				out = append(out, one("DeleteItem", pk(it.Delete.Key))...)
			case it.ConditionCheck != nil:
				out = append(out, one("ConditionCheckItem", pk(it.ConditionCheck.Key))...)
			}
		}
		return out
	}
	return []ddbRequest{{Action: "dynamodb:" + operation}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// keyCondition finds a Query's partition key value: the first equality of
// its key condition.
var keyCondition = regexp.MustCompile(`^\s*(#?\w+)\s*=\s*(:\w+)`)

// updateRequest is an UpdateItem (alone or in a transaction) with the
// attributes it names.
func updateRequest(key map[string]types.AttributeValue, update, cond *string, names map[string]string) ddbRequest {
	r := ddbRequest{Action: "dynamodb:UpdateItem", Attributes: []string{}}
	if s, ok := key["PK"].(*types.AttributeValueMemberS); ok {
		r.LeadingKeys = []string{s.Value}
	}
	for k := range key {
		r.Attributes = append(r.Attributes, k)
	}
	for _, expr := range []string{deref(update), deref(cond)} {
		r.Attributes = append(r.Attributes, expressionAttributes(expr, names)...)
	}
	slices.Sort(r.Attributes)
	r.Attributes = slices.Compact(r.Attributes)
	return r
}

// expressionWord is a name in an expression: a value (:v), a name (#n or
// a word), with what comes before it.
var expressionWord = regexp.MustCompile(`([.:]?)(#?[A-Za-z_][A-Za-z0-9_]*)(\s*\()?`)

var expressionKeywords = map[string]bool{"SET": true, "REMOVE": true, "ADD": true, "DELETE": true, "AND": true, "OR": true, "NOT": true, "BETWEEN": true, "IN": true}

// expressionAttributes returns the top-level attribute names expr names.
func expressionAttributes(expr string, names map[string]string) []string {
	var out []string
	for _, m := range expressionWord.FindAllStringSubmatch(expr, -1) {
		if m[1] != "" || m[3] != "" || expressionKeywords[strings.ToUpper(m[2])] {
			continue // a value, a nested path, a function, a keyword
		}
		name := m[2]
		if strings.HasPrefix(name, "#") {
			name = names[name]
		}
		out = append(out, name)
	}
	return out
}

// iamStatement is one statement of a policy.
type iamStatement struct {
	Effect    string
	Actions   []string
	Resources []string // "Table.Arn", "${Table.Arn}/index/*", …
	Condition map[string]any
}

// functionStatements returns the statements of every policy of each
// function of template.yaml (by logical id): its inline policy documents
// and the managed policies of the template it refers to.
func functionStatements(t *testing.T) map[string][]iamStatement {
	t.Helper()
	tpl := loadTemplate(t)
	docStatements := func(doc map[string]any) []iamStatement {
		var out []iamStatement
		stmts, _ := doc["Statement"].([]any)
		for _, s := range stmts {
			s := s.(map[string]any)
			out = append(out, iamStatement{Effect: s["Effect"].(string), Actions: strings1(s["Action"]),
				Resources: strings1(s["Resource"]), Condition: mapOf(s["Condition"])})
		}
		return out
	}
	out := map[string][]iamStatement{}
	for id, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		out[id] = []iamStatement{}
		policies, _ := r.Properties["Policies"].([]any)
		for _, p := range policies {
			switch p := p.(type) {
			case map[string]any:
				out[id] = append(out[id], docStatements(p)...)
			case string: // !Ref to a managed policy of the template
				if m, ok := tpl.Resources[p]; ok && m.Type == "AWS::IAM::ManagedPolicy" {
					out[id] = append(out[id], docStatements(mapOf(m.Properties["PolicyDocument"]))...)
				} else {
					t.Fatalf("%s: policy %q is no managed policy of the template", id, p)
				}
			}
		}
	}
	return out
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// strings1 reads a policy field that is one string or a list of them.
func strings1(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = fmt.Sprint(s)
		}
		return out
	}
	return nil
}

// iamLike reports whether s matches an IAM StringLike pattern: * any run of
// characters, ? exactly one.
func iamLike(pattern, s string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(s)
}

// applies reports whether statement s covers request r: its action, its
// resource (the table, or the index a Query reads) and its conditions.
func (s iamStatement) applies(t *testing.T, r ddbRequest) bool {
	t.Helper()
	if !slices.ContainsFunc(s.Actions, func(a string) bool { return iamLike(a, r.Action) }) {
		return false
	}
	resource := "Table.Arn"
	if r.Index != "" {
		resource = "${Table.Arn}/index/" + r.Index
	}
	if !slices.ContainsFunc(s.Resources, func(p string) bool { return iamLike(p, resource) }) {
		return false
	}
	for op, keys := range s.Condition {
		for key, want := range mapOf(keys) {
			if !conditionHolds(t, op, key, strings1(want), r) {
				return false
			}
		}
	}
	return true
}

// conditionHolds evaluates one condition operator on one key. A key the
// request lacks makes ForAllValues true, ForAnyValue false, …IfExists true.
func conditionHolds(t *testing.T, op, key string, want []string, r ddbRequest) bool {
	t.Helper()
	var have []string
	present := true
	switch key {
	case "dynamodb:LeadingKeys":
		have, present = r.LeadingKeys, len(r.LeadingKeys) > 0
	case "dynamodb:Attributes":
		have, present = r.Attributes, r.Attributes != nil
	case "dynamodb:ReturnValues", "dynamodb:Select":
		present = false // the store never sets them
	default:
		t.Fatalf("condition key %s: not modelled here", key)
	}
	like := func(v string) bool { return slices.ContainsFunc(want, func(p string) bool { return iamLike(p, v) }) }
	equals := func(v string) bool { return slices.Contains(want, v) }
	switch op {
	case "ForAllValues:StringLike":
		return !slices.ContainsFunc(have, func(v string) bool { return !like(v) })
	case "ForAllValues:StringEquals":
		return !slices.ContainsFunc(have, func(v string) bool { return !equals(v) })
	case "ForAnyValue:StringLike":
		return slices.ContainsFunc(have, like)
	case "ForAnyValue:StringNotLike":
		return slices.ContainsFunc(have, func(v string) bool { return !like(v) })
	case "StringEqualsIfExists":
		return !present || len(have) == 1 && equals(have[0])
	}
	t.Fatalf("condition operator %s: not modelled here", op)
	return false
}

// permitted says whether statements allow request r: some Allow covers it
// and no Deny does. why names the refusal.
func permitted(t *testing.T, statements []iamStatement, r ddbRequest) (ok bool, why string) {
	t.Helper()
	allowed := false
	for _, s := range statements {
		if !s.applies(t, r) {
			continue
		}
		if s.Effect == "Deny" {
			return false, fmt.Sprintf("denied by %v %v", s.Actions, s.Condition)
		}
		allowed = true
	}
	if !allowed {
		return false, "no Allow statement covers it"
	}
	return true, ""
}

// TestIAMModel checks the model itself on the cases that matter.
func TestIAMModel(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"SECRET#*", "SECRET#acct_0123456789abcdef", true},
		{"SECRET#acct_????????????????_test*", "SECRET#acct_0123456789abcdef_test", true},
		{"SECRET#acct_????????????????_test*", "SECRET#acct_0123456789abcdef_test12", true},
		{"SECRET#acct_????????????????_test*", "SECRET#acct_0123456789abcdef", false},
		{"SECRET#acct_????????????????_test*", "SECRET#acct_0123456789abcde_test", false},
		{"A#acct_????????????????", "A#acct_0123456789abcdef#SALE#1", false},
		{"dynamodb:*", "dynamodb:Query", true},
		{"${Table.Arn}/index/*", "${Table.Arn}/index/IX1", true},
		{"Table.Arn", "${Table.Arn}/index/IX1", false},
	} {
		if got := iamLike(c.pattern, c.s); got != c.want {
			t.Errorf("%q like %q: %v", c.s, c.pattern, got)
		}
	}
	names := map[string]string{"#s": "state"}
	if got := expressionAttributes("SET last_used_at = :at, #s = if_not_exists(#s, :z) REMOVE a.b ADD n :one", names); fmt.Sprint(got) != "[last_used_at state state a n]" {
		t.Errorf("expression attributes %v", got)
	}
	if got := expressionAttributes("attribute_exists(PK) AND (attribute_not_exists(last_used_at) OR last_used_at < :stale)", nil); fmt.Sprint(got) != "[PK last_used_at last_used_at]" {
		t.Errorf("condition attributes %v", got)
	}
}
