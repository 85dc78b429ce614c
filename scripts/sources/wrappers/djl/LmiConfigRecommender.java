// Excerpt of deepjavalibrary/djl-serving@d21927c4a692335fba62a87cc430a5fc00c5f790:wlm/src/main/java/ai/djl/serving/wlm/LmiConfigRecommender.java (Apache License 2.0, Copyright Amazon.com, Inc.): only what scripts/build_wrappers.py parses; regenerate with its snapshot command.
    private static void setTensorParallelDegree(Properties lmiProperties) {
        if (lmiProperties.containsKey("option.tensor_parallel_degree")) {
            return;
        }
        String tpDegree = Utils.getenv("TENSOR_PARALLEL_DEGREE", "max");
        int ppDegree =
                Integer.parseInt(lmiProperties.getProperty("option.pipeline_parallel_degree"));
        if ("max".equals(tpDegree)) {
            int numGpus = CudaUtils.getGpuCount();
            if (numGpus > 0) {
                tpDegree = String.valueOf(numGpus / ppDegree);

            } else {
                tpDegree = null;
            }
        }
        if (tpDegree != null) {
            lmiProperties.setProperty("option.tensor_parallel_degree", tpDegree);
        }
    }

    private static void setPipelineParallelDegree(Properties lmiProperties) {
        if (lmiProperties.containsKey("option.pipeline_parallel_degree")) {
            return;
        }
        String ppDegree = Utils.getenv("PIPELINE_PARALLEL_DEGREE", "1");
        lmiProperties.setProperty("option.pipeline_parallel_degree", ppDegree);
    }
