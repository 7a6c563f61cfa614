package contract

import "testing"

func TestParseReadsDefaultsAndValuesAtTheBounds(t *testing.T) {
	cases := []struct {
		param IntParam
		query string
		want  int
	}{
		{IOWaitMs, "", 10},
		{FileKB, "other=5", 1},
		{MixedIters, "ms=3", 1000},
		{MixedWaitMs, "iters=7", 10},
		{IOWaitMs, "ms=0", 0},
		{IOWaitMs, "ms=10000", 10000},
		{FileKB, "kb=1", 1},
		{FileKB, "kb=10240", 10240},
		{MixedIters, "iters=1000000&ms=0", 1000000},
		{MixedWaitMs, "iters=5&ms=250", 250},
		{IOWaitMs, "x=1&ms=%32%30&ms=9", 20},
	}
	for _, c := range cases {
		got, err := c.param.Parse(c.query)
		if err != nil || got != c.want {
			t.Errorf("%s.Parse(%q) = %d, %v; want %d, nil", c.param.Name, c.query, got, err, c.want)
		}
	}
}

func TestParseRejectsWithMessageNamingTheParameter(t *testing.T) {
	cases := []struct {
		param IntParam
		query string
		want  string
	}{
		{IOWaitMs, "ms=abc", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=-1", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=10001", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=1.5", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=%zz", "ms must be an integer in 0..=10000"},
		{IOWaitMs, "ms=99999999999999999999", "ms must be an integer in 0..=10000"},
		{FileKB, "kb=0", "kb must be an integer in 1..=10240"},
		{FileKB, "kb=10241", "kb must be an integer in 1..=10240"},
		{MixedIters, "iters=1000001", "iters must be an integer in 0..=1000000"},
		{MixedWaitMs, "iters=1&ms=x", "ms must be an integer in 0..=10000"},
	}
	for _, c := range cases {
		_, err := c.param.Parse(c.query)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s.Parse(%q) error = %v; want %q", c.param.Name, c.query, err, c.want)
		}
	}
}

func TestBadParamAnswersJSONError(t *testing.T) {
	_, err := IOWaitMs.Parse("ms=oops")
	response := BadParam(err)
	want := `{"error":"ms must be an integer in 0..=10000"}`
	if response.Status != 400 || response.ContentType != ApplicationJSON || string(response.Body) != want {
		t.Errorf("BadParam = %d %q %s; want 400 %q %s", response.Status, response.ContentType, response.Body, ApplicationJSON, want)
	}
}
