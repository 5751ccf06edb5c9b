// synthetic demo: stands in for the agent's PPTX-skill script (not executed)
const pptx = require('pptx-skill');
const labels = ["Detection Head", "3D Volume", "Input Image", "Query Tokens"];
// ... html2pptx layout, shapes and lines ...
pptx.writeFile({ fileName: 'output.pptx' });
