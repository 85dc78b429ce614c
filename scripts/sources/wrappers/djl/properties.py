# Excerpt of deepjavalibrary/djl-serving@d21927c4a692335fba62a87cc430a5fc00c5f790:engines/python/setup/djl_python/properties_manager/properties.py (Apache License 2.0, Copyright 2023 Amazon.com, Inc.): only what scripts/build_wrappers.py parses; regenerate with its snapshot command.
class Properties:
    @model_validator(mode='before')
    def set_model_id_or_path(cls, properties: dict) -> dict:
        # model_id can point to huggingface model_id or local directory.
        # If option.model_id points to a s3 bucket, we download it and set model_id to the download directory.
        # Otherwise, we assume model artifacts are in the model_dir
        properties['model_id_or_path'] = properties.get(
            "model_id") or properties.get("model_dir")
        return properties
