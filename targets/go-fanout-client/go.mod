module corobench/targets/go-fanout-client

go 1.25.0

require corobench/targets/go-common v0.0.0

require github.com/HdrHistogram/hdrhistogram-go v1.4.0

replace corobench/targets/go-common => ../go-common
