//! Prints the token ids and the first values of EmbeddingGemma vectors for texts given as
//! arguments (full inputs, prompt included), with the load and embedding times: a probe for
//! checking a `QGEM1` file by hand. Usage: `gemma_probe MODEL TEXT...`
use quire_embed::GemmaModel;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: gemma_probe MODEL TEXT...")?;
    let t0 = std::time::Instant::now();
    let model = GemmaModel::load(std::path::Path::new(&path))?;
    println!("loaded in {:.3} s", t0.elapsed().as_secs_f64());
    let texts: Vec<String> = args.collect();
    for t in &texts {
        println!("{t:?}: ids {:?}", model.token_ids(t)?);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t1 = std::time::Instant::now();
    let vs = model.embed_inputs(&refs)?;
    println!("embedded in {:.3} s", t1.elapsed().as_secs_f64());
    for v in vs {
        println!("{:?}", &v[..8]);
    }
    Ok(())
}
