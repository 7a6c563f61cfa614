module corobench/targets/go-fanout-client

go 1.25.0

require github.com/HdrHistogram/hdrhistogram-go v1.4.0
