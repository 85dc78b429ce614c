# Excerpt of deepjavalibrary/djl-serving@d21927c4a692335fba62a87cc430a5fc00c5f790:engines/python/setup/djl_python/properties_manager/vllm_rb_properties.py (Apache License 2.0, Copyright 2023 Amazon.com, Inc.): only what scripts/build_wrappers.py parses; regenerate with its snapshot command.
DTYPE_MAPPER = {
    "float32": "float32",
    "fp32": "float32",
    "float16": "float16",
    "fp16": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "auto": "auto"
}

class VllmRbProperties:
    def generate_vllm_engine_arg_dict(self,
                                      passthrough_vllm_engine_args) -> dict:
        vllm_engine_args = {
            'model': self.model_id_or_path,
            'tensor_parallel_size': self.tensor_parallel_degree,
            'pipeline_parallel_size': self.pipeline_parallel_degree,
            'max_num_seqs': self.max_rolling_batch_size,
            'dtype': DTYPE_MAPPER[self.dtype],
            'revision': self.revision,
            'max_loras': self.max_loras,
            'enable_lora': self.enable_lora,
            'trust_remote_code': self.trust_remote_code,
            'cpu_offload_gb': self.cpu_offload_gb_per_gpu,
            'quantization': self.quantize,
        }
        if self.max_rolling_batch_prefill_tokens is not None:
            vllm_engine_args[
                'max_num_batched_tokens'] = self.max_rolling_batch_prefill_tokens
        runner_convert = self._map_task_to_runner_convert()
        vllm_engine_args.update(runner_convert)
        for key in ('runner', 'convert'):
            if key in passthrough_vllm_engine_args and passthrough_vllm_engine_args[
                    key] != runner_convert[key]:
                logging.warning(
                    f"Passthrough arg '{key}={passthrough_vllm_engine_args[key]}' "
                    f"overrides computed value '{runner_convert[key]}' from task='{self.task}'"
                )
        vllm_engine_args.update(passthrough_vllm_engine_args)
        return vllm_engine_args
