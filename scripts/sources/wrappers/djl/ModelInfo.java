// Excerpt of deepjavalibrary/djl-serving@d21927c4a692335fba62a87cc430a5fc00c5f790:wlm/src/main/java/ai/djl/serving/wlm/ModelInfo.java (Apache License 2.0): only what scripts/build_wrappers.py parses; regenerate with its snapshot command.
                if (key.startsWith("OPTION_")) {
                    key = key.substring(7);
                        key = key.toLowerCase(Locale.ROOT);
                    prop.putIfAbsent("option." + key, value);
                    key = key.substring(5);
                        key = key.toLowerCase(Locale.ROOT);
