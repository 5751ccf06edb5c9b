// synthetic demo: stands in for the agent's PPTX-skill script (not executed)
const pptx = require('pptx-skill');
const labels = ["Reflection", "Policy", "Memory Store", "Environment"];
// ... html2pptx layout, shapes and lines ...
pptx.writeFile({ fileName: 'output.pptx' });
