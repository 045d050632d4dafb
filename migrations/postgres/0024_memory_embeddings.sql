-- Embeddings for the agents' memory. An OpenAI-compatible provider with
-- an embeddings_model serves vectors for the memory of the agents on it.
-- Each entry keeps the vector of its current text (float32, little
-- endian) and the model that made it; a change of text clears both until
-- the next embedding, so a vector never describes other text. An entry
-- without a vector is recalled by full text alone.
ALTER TABLE providers ADD COLUMN embeddings_model TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_entries ADD COLUMN embedding BYTEA;
ALTER TABLE memory_entries ADD COLUMN embedding_model TEXT NOT NULL DEFAULT '';
