// synthetic demo: stands in for the agent's PPTX-skill script (not executed)
const pptx = require('pptx-skill');
const labels = ["Embedding", "Cross Attention", "Alignment", "Answer Head"];
// ... html2pptx layout, shapes and lines ...
pptx.writeFile({ fileName: 'output.pptx' });
