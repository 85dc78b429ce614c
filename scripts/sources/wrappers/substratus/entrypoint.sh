# Excerpt of substratusai/vllm-docker@2dfb53fbf8f0b7d1ba035fe687edb0cf43d9cda7:entrypoint.sh (Apache License 2.0): only what scripts/build_wrappers.py parses; regenerate with its snapshot command.
export NUM_GPU=$(gpu-count.py)
    --tensor-parallel-size ${NUM_GPU} \
    --port "${PORT}" \
    --model "${MODEL}" \
    --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION}"
