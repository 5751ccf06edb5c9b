// synthetic demo: stands in for the agent's PPTX-skill script (not executed)
const pptx = require('pptx-skill');
const labels = ["Text Encoder", "Vocabulary", "Tokenizer", "Beam Search"];
// ... html2pptx layout, shapes and lines ...
pptx.writeFile({ fileName: 'output.pptx' });
