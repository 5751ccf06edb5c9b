// synthetic demo: stands in for the agent's PPTX-skill script (not executed)
const pptx = require('pptx-skill');
const labels = ["Segmentation", "Keypoints", "3D Volume", "Feature Pyramid"];
// ... html2pptx layout, shapes and lines ...
pptx.writeFile({ fileName: 'output.pptx' });
