email    = "your-email@example.com"
password = "your-password"
hf_token = "your-hf-token"